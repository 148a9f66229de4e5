"""Qt item models over the codec model."""
