"""The build history from Python (docs/history.md): after four simulated builds of one
profile, the fifth's result carries an ETA range from them; with too little history it
says how much there is."""
import trtwatch


def simulate(history, seed):
    return trtwatch.simulate("small-cnn", seed=seed, speed=4, progress="quiet", history=str(history))


def test_the_fifth_simulated_build_carries_an_estimate_from_the_four_before(tmp_path):
    first = simulate(tmp_path, 1)
    assert first.succeeded
    assert first.estimate == {"remaining": None, "based_on": {"builds": 0, "match": "exact"},
                              "longer_than_history": False}
    for seed in range(2, 5):
        assert simulate(tmp_path, seed).succeeded
    fifth = simulate(tmp_path, 5)
    assert fifth.succeeded
    estimate = fifth.estimate
    assert estimate["based_on"] == {"builds": 4, "match": "exact"}
    remaining = estimate["remaining"]
    assert 0 <= remaining["p10"] <= remaining["p50"] <= remaining["p90"]


def test_no_history_gives_no_estimate(tmp_path):
    result = trtwatch.simulate("small-cnn", speed=8, progress="quiet", history=str(tmp_path), no_history=True)
    assert result.succeeded and result.estimate is None
    assert not (tmp_path / "history.jsonl").exists()
