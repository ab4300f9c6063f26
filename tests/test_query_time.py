"""Time named in a query (mind/retrieval/query_time.py): which windows a phrase opens, and their edges.

``now`` is fixed at Thursday 2024-03-14 15:00 UTC so every relative phrase has one answer.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from mind.retrieval.query_time import (
    TimeWindow,
    in_windows,
    time_windows,
    told_days,
    told_in_windows,
)

NOW = datetime(2024, 3, 14, 15, 0, tzinfo=UTC)  # a Thursday
D = date


def spans(query: str) -> list[tuple[date | None, date | None, int | None]]:
    return [(w.start, w.end, w.month) for w in time_windows(query, NOW)]


NOV_9 = (D(2022, 11, 9), D(2022, 11, 10), None)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # full dates, several spellings: one day, and nothing else (not also the month)
        ("What dish did Nate make on 9 November 2022?", [NOV_9]),
        ("What dish did Nate make on 9 November, 2022?", [NOV_9]),
        ("what happened on November 9th, 2022", [NOV_9]),
        ("what happened on November 9, 2022", [NOV_9]),
        ("notes from 2022-11-09 please", [NOV_9]),
        ("on 9 Nov 2022", [NOV_9]),
        ("on 9 Nov. 2022", [NOV_9]),
        ("on the 9th of November 2022", [NOV_9]),
        ("on 1st January 2023", [(D(2023, 1, 1), D(2023, 1, 2), None)]),
        ("on 31 December 2023", [(D(2023, 12, 31), D(2024, 1, 1), None)]),
        ("on 29 February 2024", [(D(2024, 2, 29), D(2024, 3, 1), None)]),  # leap day
        # month and year
        ("What did Sam cook in May 2023?", [(D(2023, 5, 1), D(2023, 6, 1), None)]),
        ("What did Maria donate in December 2023?", [(D(2023, 12, 1), D(2024, 1, 1), None)]),
        ("the Sept 2021 offsite", [(D(2021, 9, 1), D(2021, 10, 1), None)]),
        ("February, 2024 numbers", [(D(2024, 2, 1), D(2024, 3, 1), None)]),
        # a month after a preposition: that month of any year
        ("When did Melanie go camping in June?", [(None, None, 6)]),
        ("what did we plan for early August", [(None, None, 8)]),
        ("since March", [(None, None, 3)]),
        # a year after a preposition
        ("what did I read in 2023", [(D(2023, 1, 1), D(2024, 1, 1), None)]),
        ("trips during 2019", [(D(2019, 1, 1), D(2020, 1, 1), None)]),
        # relative to now
        ("what did I do today", [(D(2024, 3, 14), D(2024, 3, 15), None)]),
        ("what did I eat yesterday", [(D(2024, 3, 13), D(2024, 3, 14), None)]),
        ("plans this week", [(D(2024, 3, 11), D(2024, 3, 18), None)]),
        ("what did we decide last week", [(D(2024, 3, 4), D(2024, 3, 11), None)]),
        ("what did we decide the previous week", [(D(2024, 3, 4), D(2024, 3, 11), None)]),
        ("where did we go last weekend", [(D(2024, 3, 9), D(2024, 3, 11), None)]),
        ("where did we go this past weekend", [(D(2024, 3, 9), D(2024, 3, 11), None)]),
        ("bills this month", [(D(2024, 3, 1), D(2024, 4, 1), None)]),
        ("bills last month", [(D(2024, 2, 1), D(2024, 3, 1), None)]),
        ("goals this year", [(D(2024, 1, 1), D(2025, 1, 1), None)]),
        ("goals last year", [(D(2023, 1, 1), D(2024, 1, 1), None)]),
        ("what did we watch last night", [(D(2024, 3, 13), D(2024, 3, 14), None)]),
        ("what is on tonight", [(D(2024, 3, 14), D(2024, 3, 15), None)]),
        ("what did I say this morning", [(D(2024, 3, 14), D(2024, 3, 15), None)]),
        ("plans for tomorrow", [(D(2024, 3, 15), D(2024, 3, 16), None)]),
        ("plans for next week", [(D(2024, 3, 18), D(2024, 3, 25), None)]),
        ("plans for next weekend", [(D(2024, 3, 23), D(2024, 3, 25), None)]),
        ("bills next month", [(D(2024, 4, 1), D(2024, 5, 1), None)]),
        ("goals next year", [(D(2025, 1, 1), D(2026, 1, 1), None)]),
        # weekdays: the most recent one strictly before today
        ("what did Alex say last Tuesday", [(D(2024, 3, 12), D(2024, 3, 13), None)]),
        ("what did Alex say on Monday", [(D(2024, 3, 11), D(2024, 3, 12), None)]),
        ("what did Alex say on Friday", [(D(2024, 3, 8), D(2024, 3, 9), None)]),
        ("what did Alex say last Thursday", [(D(2024, 3, 7), D(2024, 3, 8), None)]),  # not today
        # two phrases, two windows
        ("in May 2023 and in June",
         [(D(2023, 5, 1), D(2023, 6, 1), None), (None, None, 6)]),
        ("on 2022-11-09 and on 2022-11-12",
         [NOV_9, (D(2022, 11, 12), D(2022, 11, 13), None)]),
        # between two dates: one window over both, the end day included
        ("between 2022-11-09 and 2022-11-12", [(D(2022, 11, 9), D(2022, 11, 13), None)]),
        ("Where was John between August 11 and August 15 2023?",
         [(D(2023, 8, 11), D(2023, 8, 16), None)]),
        ("between 11 and 15 August 2023", [(D(2023, 8, 11), D(2023, 8, 16), None)]),
        ("from 28 December to 2 January 2024", [(D(2023, 12, 28), D(2024, 1, 3), None)]),
        ("from May 2023 to July 2023", [(D(2023, 5, 1), D(2023, 8, 1), None)]),
        # a span before / after a date reaches that far, the date itself included
        ("Where was Tim in the week before 16 November 2023?",
         [(D(2023, 11, 9), D(2023, 11, 17), None)]),
        ("the weekend after 2023-05-05", [(D(2023, 5, 5), D(2023, 5, 13), None)]),
        ("a month before May 2023", [(D(2023, 3, 31), D(2023, 6, 1), None)]),
        # a part of a month
        ("the first half of September 2022", [(D(2022, 9, 1), D(2022, 9, 16), None)]),
        ("the second week of November 2023", [(D(2023, 11, 8), D(2023, 11, 15), None)]),
        ("the last week of February 2024", [(D(2024, 2, 23), D(2024, 3, 1), None)]),
        ("the second week of November", [(None, None, 11)]),
        # before / after / since / as of: open on one side
        ("what had we picked as of 3 May 2023", [(None, D(2023, 5, 4), None)]),
        ("what had we picked by 3 May 2023", [(None, D(2023, 5, 4), None)]),
        ("plans made before 3 May 2023", [(None, D(2023, 5, 3), None)]),
        ("plans made prior to May 2023", [(None, D(2023, 5, 1), None)]),
        ("what changed after 3 May 2023", [(D(2023, 5, 4), None, None)]),
        ("what changed since 3 May 2023", [(D(2023, 5, 3), None, None)]),
        ("everything since 2022", [(D(2022, 1, 1), None, None)]),
        ("everything before 2022", [(None, D(2022, 1, 1), None)]),
        # negatives: no time named
        ("the 2023 budget", []),  # a bare number is never a year
        ("May I ask what the plan is?", []),
        ("march forward with the plan", []),
        ("we had a week of rain", []),
        ("what is the code word", []),
        ("", []),
    ],
)
def test_windows(query: str, expected: list[tuple[date | None, date | None, int | None]]
                 ) -> None:
    assert spans(query) == expected


def test_a_full_date_is_not_also_its_month_or_year() -> None:
    """Overlapping phrases: the most specific wins and the others are not counted."""
    (window,) = time_windows("What did Sam cook in May 2023?", NOW)  # not also "in May"
    assert window.month is None and window.start == D(2023, 5, 1)
    (window,) = time_windows("what happened on 9 November 2022", NOW)
    assert (window.start, window.end) == (D(2022, 11, 9), D(2022, 11, 10))
    assert window.label == "9 November 2022"


@pytest.mark.parametrize(
    ("query", "inside", "outside"),
    [
        ("3 days ago", [D(2024, 3, 11)], [D(2024, 3, 14), D(2024, 3, 1)]),
        ("3 weeks ago", [D(2024, 2, 22)], [D(2024, 3, 14), D(2024, 1, 22)]),
        ("two months ago", [D(2024, 1, 14)], [D(2024, 3, 14), D(2023, 11, 14)]),
        ("a year ago", [D(2023, 3, 14)], [D(2024, 3, 14), D(2022, 3, 14)]),
        ("a couple of days ago", [D(2024, 3, 12)], [D(2024, 3, 14), D(2024, 3, 5)]),
        ("an hour or two ago", [], [D(2024, 3, 14)]),  # hours are not understood: no window
    ],
)
def test_ago_is_a_window_around_that_moment(query: str, inside: list[date],
                                             outside: list[date]) -> None:
    windows = time_windows(query, NOW)
    assert len(windows) == (1 if inside else 0)
    for day in inside:
        assert windows[0].contains(day), (query, day)
    for day in outside:
        assert not any(w.contains(day) for w in windows), (query, day)


@pytest.mark.parametrize("query", ["2023-13-01", "2023-02-30", "on 2023-00-10"])
def test_an_impossible_iso_date_opens_no_window(query: str) -> None:
    assert time_windows(query, NOW) == []  # and raises nothing


@pytest.mark.parametrize("query", ["what happened on 31 February 2023", "on 32 May 2023"])
def test_an_invalid_full_date_opens_no_window(query: str) -> None:
    assert time_windows(query, NOW) == []  # no exception either way


def test_relative_phrases_follow_now() -> None:
    sunday = datetime(2024, 3, 17, 23, 59, tzinfo=UTC)
    assert [(w.start, w.end) for w in time_windows("last week", sunday)] == [
        (D(2024, 3, 4), D(2024, 3, 11))]
    monday = datetime(2024, 3, 18, 0, 1, tzinfo=UTC)
    assert [(w.start, w.end) for w in time_windows("last week", monday)] == [
        (D(2024, 3, 11), D(2024, 3, 18))]
    assert [(w.start, w.end) for w in time_windows("on Monday", monday)] == [
        (D(2024, 3, 11), D(2024, 3, 12))]  # today is Monday: the one a week ago
    new_year = datetime(2024, 1, 1, 8, tzinfo=UTC)
    assert [(w.start, w.end) for w in time_windows("last month", new_year)] == [
        (D(2023, 12, 1), D(2024, 1, 1))]
    assert [(w.start, w.end) for w in time_windows("yesterday", new_year)] == [
        (D(2023, 12, 31), D(2024, 1, 1))]
    # ``now`` in another zone is read in UTC: 2024-03-15 01:00+05:00 is still the 14th in UTC
    east = datetime(2024, 3, 15, 1, 0, tzinfo=timezone(timedelta(hours=5)))
    assert [(w.start, w.end) for w in time_windows("today", east)] == [
        (D(2024, 3, 14), D(2024, 3, 15))]


NOV_9_WINDOW = time_windows("on 9 November 2022", NOW)
JUNE_WINDOW = time_windows("in June", NOW)


@pytest.mark.parametrize(
    ("windows", "created_at", "inside"),
    [
        (NOV_9_WINDOW, "2022-11-09T00:00:00Z", True),
        (NOV_9_WINDOW, "2022-11-09T00:00:00.000Z", True),
        (NOV_9_WINDOW, "2022-11-09T23:59:59Z", True),
        (NOV_9_WINDOW, "2022-11-09T23:59:59.999Z", True),
        (NOV_9_WINDOW, "2022-11-10T00:00:00Z", False),  # end is exclusive
        (NOV_9_WINDOW, "2022-11-08T23:59:59Z", False),
        (NOV_9_WINDOW, "2022-11-09 12:00:00", True),  # legacy SQLite datetime, naive = UTC
        (NOV_9_WINDOW, "2022-11-10T01:00:00+02:00", True),  # 23:00 UTC on the 9th
        (NOV_9_WINDOW, "2022-11-09T23:30:00-05:00", False),  # 04:30 UTC on the 10th
        (JUNE_WINDOW, "2019-06-01T00:00:00Z", True),
        (JUNE_WINDOW, "2031-06-30T23:59:59Z", True),
        (JUNE_WINDOW, "2019-07-01T00:00:00Z", False),
        (JUNE_WINDOW, "2019-05-31T23:59:59Z", False),
        ([], "2022-11-09T12:00:00Z", False),  # no window: nothing is "in" it
    ],
)
def test_in_windows_is_half_open_in_utc(windows: list[TimeWindow], created_at: str,
                                        inside: bool) -> None:
    assert in_windows(windows, created_at) is inside


def test_in_windows_any_of_several() -> None:
    windows = time_windows("on 2022-11-09 or in May 2023", NOW)
    assert len(windows) == 2
    assert in_windows(windows, "2023-05-31T23:59:59Z")
    assert in_windows(windows, "2022-11-09T08:00:00Z")
    assert not in_windows(windows, "2023-06-01T00:00:00Z")


def test_open_windows_hold_everything_on_their_side() -> None:
    """"as of" a date is the state then: everything up to the end of that day, nothing after."""
    (as_of,) = time_windows("which database had we chosen as of 3 May 2023?", NOW)
    assert in_windows([as_of], "2021-01-01T00:00:00Z")
    assert in_windows([as_of], "2023-05-03T23:59:59Z")
    assert not in_windows([as_of], "2023-05-04T00:00:00Z")
    (since,) = time_windows("what has Sam cooked since June 2023?", NOW)
    assert not in_windows([since], "2023-05-31T23:59:59Z")
    assert in_windows([since], "2023-06-01T00:00:00Z") and in_windows([since], "2031-01-01T00:00:00Z")


def test_a_month_of_any_year_keeps_its_window_after_a_relation_word() -> None:
    assert spans("since March") == [(None, None, 3)]
    assert spans("before June") == [(None, None, 6)]


def test_a_part_of_a_month_of_any_year_holds_only_its_days() -> None:
    (week,) = time_windows("Which country was Tim visiting in the second week of November?", NOW)
    assert week.contains(D(2019, 11, 8)) and week.contains(D(2031, 11, 14))
    assert not week.contains(D(2023, 11, 7)) and not week.contains(D(2023, 11, 15))
    assert not week.contains(D(2023, 10, 10))


def test_a_frame_tells_of_the_days_its_own_words_name() -> None:
    """Resolved against the frame's source time, never against today."""
    said = "2023-11-16T15:59:00Z"  # a Thursday
    assert told_days("I went to a castle in the UK last Friday!", said) == [D(2023, 11, 10)]
    assert told_days("We got back yesterday.", said) == [D(2023, 11, 15)]
    assert told_days("I watched the trilogy last night!", said) == [D(2023, 11, 15)]
    assert told_days("Three days ago I ran 10 km", said) == [D(2023, 11, 12), D(2023, 11, 13),
                                                            D(2023, 11, 14)]
    assert told_days("my trip on 3 May 2023", said) == [D(2023, 5, 3)]
    # too wide, open or of any year: no day
    assert told_days("We went camping last year.", said) == []
    assert told_days("Ever since 2019 I paint.", said) == []
    assert told_days("We always go in June.", said) == []
    assert told_days("Just a plain sentence.", said) == []
    week = time_windows("in the second week of November", NOW)
    assert told_in_windows(week, "I went to a castle in the UK last Friday!", said)
    assert not told_in_windows(week, "I went to a castle in the UK yesterday!", said)
    assert not told_in_windows([], "I went to a castle last Friday!", said)
