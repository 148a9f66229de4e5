from ztviewer.session.name_elide import elide_dotted

NAME = "model.layers.12.self_attn.q_proj.weight"


def fits_in(chars: int):
    return lambda text: len(text) <= chars


def test_names_that_fit_are_kept_whole():
    assert elide_dotted(NAME, fits_in(len(NAME))) == NAME


def test_leading_words_go_first_and_the_layer_index_stays():
    assert elide_dotted(NAME, fits_in(len(NAME) - 1)) == "…layers.12.self_attn.q_proj.weight"
    assert elide_dotted(NAME, fits_in(26)) == "…layers.12…q_proj.weight"
    assert elide_dotted(NAME, fits_in(18)) == "…12…q_proj.weight"


def test_the_tail_is_all_that_is_left_when_nothing_fits():
    assert elide_dotted(NAME, fits_in(3)) == "…q_proj.weight"
    assert elide_dotted("a.b", fits_in(1)) == "a.b"


def test_twins_differing_only_in_the_middle_stay_apart():
    left = elide_dotted("model.layers.3.mlp.experts.7.down_proj.weight", fits_in(24))
    right = elide_dotted("model.layers.3.mlp.experts.8.down_proj.weight", fits_in(24))
    assert left != right and "7" in left and "8" in right


def test_plural_and_ordinal():
    from ztviewer.session.formatting import ordinal, plural

    assert plural(1, "entry", "entries") == "1 entry" and plural(2, "entry", "entries") == "2 entries"
    assert plural(1, "digest") == "1 digest" and plural(1000, "digest") == "1,000 digests"
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 32, 111, 112)] == \
        ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "32nd", "111th", "112th"]


def test_si_count_tick_labels():
    from ztviewer.session.formatting import si_count

    assert [si_count(v, 250_000) for v in (0, 250_000, 1_000_000, 1_250_000)] == ["0", "250k", "1M", "1.25M"]
    assert [si_count(v, 1) for v in (0, 7, 999)] == ["0", "7", "999"]
    assert si_count(12_500_000, 2_500_000) == "12.5M" and si_count(-2e6, 1e6) == "-2M"
    assert si_count(3e9, 1e9) == "3G" and si_count(2.5, 0.5) == "2.5"
