"""A homework rubric: one pass/fail line per criterion, each with a Spanish and an English text.

Students read the result (the course is in Spanish); instructors and CI logs may be in English.
A failing line says what is missing and what to type to fix it, not just "wrong".
"""
from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["CriterionResult", "Rubric"]


@dataclass
class CriterionResult:
    """One criterion: ``key`` (e.g. 'baseline'), its title, pass/fail and what was found."""

    key: str
    title: str
    passed: bool
    detail_es: str
    detail_en: str

    @property
    def message(self) -> str:
        return f"{self.detail_es}\n{self.detail_en}"

    def __str__(self):
        mark = "OK   " if self.passed else "FALLA"
        return (f"[{mark}] {self.title}\n" + "\n".join(
            f"        {label}: {text}" for label, text in (("ES", self.detail_es),
                                                         ("EN", self.detail_en))))


@dataclass
class Rubric:
    """The results of every criterion, in order; ``passed`` when all passed."""

    title: str
    results: list = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results)

    @property
    def failed(self) -> list:
        return [r.key for r in self.results if not r.passed]

    def __getitem__(self, key) -> CriterionResult:
        for r in self.results:
            if r.key == key:
                return r
        raise KeyError(f"no criterion {key!r}; the rubric has {[r.key for r in self.results]}")

    def __str__(self):
        done = sum(r.passed for r in self.results)
        verdict = ("APROBADA / PASSED" if self.passed else "NO APROBADA / NOT PASSED")
        return "\n".join([self.title, *(str(r) for r in self.results),
                          f"{done}/{len(self.results)} criterios / criteria: {verdict}"])
