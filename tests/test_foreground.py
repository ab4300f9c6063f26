"""Background work steps aside while requests are answered (mind/foreground.py)."""

from __future__ import annotations

import threading

from mind.foreground import answering, in_progress, step_aside


def test_background_work_waits_while_a_request_is_answered() -> None:
    passed: list[int] = []

    def piece_of_background_work() -> None:
        step_aside(patience=600)
        passed.append(in_progress())

    with answering(), answering():  # two requests at once
        assert in_progress() == 2
        worker = threading.Thread(target=piece_of_background_work)
        worker.start()
        worker.join(0.3)
        assert worker.is_alive() and passed == []  # it cannot go on while they run
    worker.join(60)
    assert passed == [0]  # released when the last request ended


def test_background_work_is_not_starved_by_requests_that_never_pause() -> None:
    with answering():
        step_aside(patience=0.01)  # returns: one piece per patience under constant requests
        assert in_progress() == 1
    assert in_progress() == 0
    step_aside()  # nobody is answered: returns at once
