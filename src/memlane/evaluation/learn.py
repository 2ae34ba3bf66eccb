"""Training the learned injection screen (write.injection_model) on labelled cases.
Pure: cases in, a model out.

Logistic regression over hashed tf-idf n-grams, classes weighted to balance, fitted
by full-batch Adam on the regularised log loss. The threshold that turns a score
into a flag is chosen without looking at the cases it will judge: each corpus file
is held out in turn, a model fitted on the rest scores its benign cases, and the
threshold is the score that one in a hundred of those held-out benign cases reach.
`held_out` gives the same folds' verdicts, so what is reported for the model is
always measured on a file it was not fitted on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from memlane.evaluation.screening import Case
from memlane.write.injection import decide, prepare, ruled
from memlane.write.injection_model import BUCKETS, Features, Floats, Model, features, vector

STRENGTH = 16.0  # inverse regularisation: the log loss counts this much against |w|^2 / 2
STEPS = 300
LEARNING_RATE = 0.05
BENIGN_FLAGGED = 0.01  # the share of held-out benign cases the threshold lets through
INJECTIONS_VETOED = 0.01  # the share of held-out injections scoring below the veto


def _idf(found: Sequence[Features]) -> Floats:
    document_frequency = np.zeros(BUCKETS)
    for buckets, _ in found:
        document_frequency[buckets] += 1.0
    n = len(found)
    return np.log((1.0 + n) / (1.0 + document_frequency)) + 1.0


def fit(cases: Sequence[Case], strength: float = STRENGTH, steps: int = STEPS) -> Model:
    """A model fitted on `cases` (threshold 0.5, no veto: the caller chooses them)."""
    found = [features(prepare(case.text)) for case in cases]
    idf = _idf(found)
    rows = np.concatenate([np.full(len(f.buckets), i) for i, f in enumerate(found)])
    used, cols = np.unique(np.concatenate([f.buckets for f in found]), return_inverse=True)
    vals = np.concatenate([vector(f, idf) for f in found])
    labels = np.array([case.label == "injection" for case in cases], dtype=np.float64)
    positives = max(labels.sum(), 1.0)
    negatives = max(len(labels) - labels.sum(), 1.0)
    class_weight = np.where(
        labels == 1.0, len(labels) / (2 * positives), len(labels) / (2 * negatives)
    )
    params = np.zeros(len(used) + 1)  # the weights of the buckets seen, then the bias
    moment, velocity = np.zeros_like(params), np.zeros_like(params)
    for step in range(1, steps + 1):
        margin = np.bincount(rows, weights=vals * params[cols], minlength=len(found)) + params[-1]
        error = class_weight * (1.0 / (1.0 + np.exp(-margin)) - labels)
        gradient = np.empty_like(params)
        gradient[:-1] = np.bincount(cols, weights=vals * error[rows], minlength=len(used))
        gradient[:-1] += params[:-1] / strength
        gradient[-1] = error.sum()
        gradient /= len(found)
        moment = 0.9 * moment + 0.1 * gradient
        velocity = 0.999 * velocity + 0.001 * gradient**2
        corrected = moment / (1 - 0.9**step) / (np.sqrt(velocity / (1 - 0.999**step)) + 1e-8)
        params -= LEARNING_RATE * corrected
    weights = np.zeros(BUCKETS)
    weights[used] = params[:-1]
    return Model(idf, weights, float(params[-1]), 0.5, 0.0)


def held_out(cases: Sequence[Case]) -> list[float]:
    """Each case's score from a model fitted on the other files' cases."""
    scores = [0.0] * len(cases)
    for held in sorted({case.source for case in cases}):
        model = fit([case for case in cases if case.source != held])
        for i, case in enumerate(cases):
            if case.source == held:
                scores[i] = model.score(prepare(case.text))
    return scores


def train(cases: Sequence[Case]) -> Model:
    """A model fitted on every case, with a threshold and a veto read off held-out
    scores: the threshold that BENIGN_FLAGGED of benign cases reach, the veto that
    INJECTIONS_VETOED of injections fall below."""
    scores = held_out(cases)
    benign = [s for s, case in zip(scores, cases, strict=True) if case.label != "injection"]
    attacks = [s for s, case in zip(scores, cases, strict=True) if case.label == "injection"]
    threshold = float(np.quantile(benign, 1.0 - BENIGN_FLAGGED)) if benign else 0.5
    veto = float(np.quantile(attacks, INJECTIONS_VETOED)) if attacks else 0.0
    return fit(cases)._replace(threshold=threshold, veto=veto)


def held_out_verdicts(
    cases: Sequence[Case], tell: Callable[[int, int], None] | None = None
) -> list[bool]:
    """Each case judged by the rules and a model trained (threshold and veto
    included) without its file: how the screen does on a file nobody fitted it to.
    `tell(done, total)` hears of each file finished."""
    files = sorted({case.source for case in cases})
    verdicts = [False] * len(cases)
    for done, held in enumerate(files, 1):
        model = train([case for case in cases if case.source != held])
        for i, case in enumerate(cases):
            if case.source == held:
                prepared = prepare(case.text)
                score, words = model.score(prepared), len(prepared.split())
                verdicts[i] = bool(decide(ruled(prepared), score, model, words))
        if tell is not None:
            tell(done, len(files))
    return verdicts
