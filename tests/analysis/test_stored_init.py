"""`stored_init`: a frozen dataclass's faster `__init__` makes the very instances the generated one
made (fields, defaults, fresh default factories, keyword-only fields, `replace`, equality,
frozenness), and refuses the classes it would not reproduce."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import pytest

from shardls.analysis.evaluation.frame import Frame
from shardls.analysis.values import Const, Origin, Unknown
from shardls.stored_init import stored_init


@dataclass(frozen=True, kw_only=True)
class _Base:
    origin: str | None = field(default=None, compare=False)


@stored_init
@dataclass(frozen=True)
class _Stored(_Base):
    name: str
    items: list[int] = field(default_factory=list)
    count: int = 3


@dataclass(frozen=True)
class _Generated(_Base):
    name: str
    items: list[int] = field(default_factory=list)
    count: int = 3


def test_the_instances_are_those_the_generated_init_made() -> None:
    assert vars(_Stored("a")) == vars(_Generated("a"))
    assert vars(_Stored("a", [1], 5, origin="here")) == vars(_Generated("a", [1], 5, origin="here"))
    assert vars(_Stored(name="b", count=1)) == vars(_Generated(name="b", count=1))
    assert _Stored("a").items is not _Stored("a").items  # a fresh list each time
    assert _Stored("a", origin="x") == _Stored("a", origin="y")  # origin is not compared
    assert dataclasses.replace(_Stored("a", [1]), count=7) == _Stored("a", [1], 7)
    with pytest.raises(dataclasses.FrozenInstanceError):
        _Stored("a").name = "b"  # type: ignore[misc]
    with pytest.raises(TypeError):
        _Stored("a", [], 1, "positional origin")  # type: ignore[call-arg]


def test_the_analysis_classes_take_their_fields_as_before() -> None:
    assert vars(Const(3, origin=Origin("literal", "m.py", 2))) == {
        "origin": Origin("literal", "m.py", 2),
        "value": 3,
    }
    assert vars(Unknown("why")) == {"origin": None, "reason": "why", "symbol": None}
    frame = Frame(None, None, None, 4)  # type: ignore[arg-type]
    assert (frame.locals, frame.call_depth, frame.enclosing, frame.runs_at, frame.in_order) == (
        {},
        0,
        None,
        None,
        False,
    )


def test_it_refuses_what_it_would_not_reproduce() -> None:
    with pytest.raises(TypeError):

        @stored_init
        @dataclass
        class _NotFrozen:
            x: int

    with pytest.raises(TypeError):

        @stored_init
        @dataclass(frozen=True)
        class _Later:
            x: int

            def __post_init__(self) -> None:
                pass

    with pytest.raises(TypeError):

        @stored_init
        @dataclass(frozen=True)
        class _NotInit:
            x: int
            y: int = field(default=0, init=False)
