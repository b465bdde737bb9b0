"""`LLMJudge`: a model of yours judges a case's output against a rubric.

The judge is sent one request: instructions saying how to answer, and a user message with the
case's input, the run's output, the expected output when the case has one, and the rubric. It
must answer a JSON object `{"pass": true|false, "reason": "...", "score": 0..1?}` (in a code
fence or not, with other text around it or not: the first object whose "pass" is a bool).
Any model works: an `agents` model (`LiteLLMModel`, `OpenAICompatibleModel`, `ScriptedModel`
in tests) or any object with `complete(request)`.

The judge's answer is model output, so hostile: an answer that is not that object, or a score
that is not a number from 0 to 1, fails the case with a reason saying so (never a crash), and
a model error fails it too, naming the error's type.
"""

from __future__ import annotations

import json
import math
from typing import Any

from network.errors import ConfigurationError
from network.evals.cases import Case
from network.evals.scorers import CaseRun, Score, Scorer
from network.history.messages import SystemMessage, UserMessage
from network.history.model_answer import answer_of
from network.history.model_io import ModelRequest

JUDGE_INSTRUCTIONS = (
    "You judge the output of an AI system against a rubric. Answer with one JSON object and "
    'nothing else: {"pass": true or false, "reason": "one sentence", "score": a number from '
    "0 to 1}."
)
MAX_SHOWN = 20_000  # characters of an input or output shown to the judge
MAX_READ = 100_000  # characters of the judge's answer searched for its verdict
_OBJECTS_TRIED = 100  # a "{" that starts no JSON object costs one try
_DECODER = json.JSONDecoder()


class LLMJudge(Scorer):
    """A model judges the output against `rubric` (see the module docstring)."""

    def __init__(self, model: Any, rubric: str, *, name: str = "judge") -> None:
        if not callable(getattr(model, "complete", None)):
            raise ConfigurationError(f"LLMJudge: {model!r} is not a model (no complete())")
        if not isinstance(rubric, str) or not rubric.strip():
            raise ConfigurationError("LLMJudge: rubric must be a non-empty string")
        self.model = model
        self.rubric = rubric
        self.name = name

    def request(self, case: Case, run: CaseRun) -> ModelRequest:
        """What the judge is sent for `case`."""
        parts = [f"Input:\n{case.input[:MAX_SHOWN]}", f"Output:\n{(run.output or '')[:MAX_SHOWN]}"]
        if case.expected_output is not None:
            expected = case.expected_output
            text = expected if isinstance(expected, str) else json.dumps(expected, default=str)
            parts.append(f"Expected output:\n{text[:MAX_SHOWN]}")
        parts.append(f"Rubric:\n{self.rubric}")
        return ModelRequest(
            [SystemMessage(JUDGE_INSTRUCTIONS)], [UserMessage("\n\n".join(parts))], agent=self.name
        )

    async def score(self, case: Case, run: CaseRun) -> Score | None:
        try:
            response = await answer_of(self.model, None, self.request(case, run))
        except Exception as exc:  # the judge failing fails the case, and says why
            return self._verdict(False, f"the judge failed: {type(exc).__name__}")
        return self.read(getattr(response.message, "content", None))

    def read(self, text: Any) -> Score:
        """The judge's answer as a `Score` (a failed one when it is not the object asked)."""
        said = _verdict_in(text) if isinstance(text, str) else None
        if said is None:
            shown = text[:200] if isinstance(text, str) else repr(text)
            return self._verdict(False, f"the judge's answer is not a verdict: {shown!r}")
        passed = said["pass"]
        reason = said.get("reason")
        reason = reason[:500] if isinstance(reason, str) else ""
        value = said.get("score")
        if value is None:
            return self._verdict(passed, reason)
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not 0 <= value <= 1  # the range first: 10**400 has no `isfinite`
            or not math.isfinite(value)
        ):
            shown = repr(value)[:100] if not isinstance(value, int) or value < 10**50 else "huge"
            return self._verdict(False, f"the judge's score is not a number from 0 to 1: {shown}")
        return self._verdict(passed, reason, float(value))


def _verdict_in(text: str) -> dict[str, Any] | None:
    """The first JSON object in `text` whose "pass" is a bool, or None. A judge may say more
    around it ("Verdict: {...}. Note: {x} is fine."): one pattern from the first "{" to the
    last "}" took all of that, which is no JSON, and failed the case."""
    text = text[:MAX_READ]
    start = text.find("{")
    for _ in range(_OBJECTS_TRIED):
        if start == -1:
            break
        try:
            found, _end = _DECODER.raw_decode(text, start)
        except (ValueError, RecursionError):
            found = None
        if isinstance(found, dict) and isinstance(found.get("pass"), bool):
            return found
        start = text.find("{", start + 1)
    return None
