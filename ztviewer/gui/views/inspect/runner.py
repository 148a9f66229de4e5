"""The inspect views' job slot: :class:`~ztviewer.workers.job_slot.JobSlot` (it lives with the workers, so views
outside the Inspect area use it without importing the plots)."""
from ztviewer.workers.job_slot import Job, JobSlot

__all__ = ["Job", "JobSlot"]
