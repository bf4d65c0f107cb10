#!/usr/bin/python3
"""Compute reference values for evals/metrics tests with scikit-learn and
statsmodels (Debian python3-sklearn 1.2.1, python3-statsmodels 0.13.5,
numpy 1.24.2, scipy 1.10.1). Run once from the repository root:

    /usr/bin/python3 evals/metrics/testdata/reference.py ../shared/testdata > evals/metrics/testdata/reference.json

The Go tests never run Python; they read reference.json.
"""
import json
import sys

import numpy as np
import sklearn
import statsmodels
from scipy.stats import spearmanr
from sklearn.calibration import calibration_curve
from sklearn.metrics import (accuracy_score, average_precision_score,
                             brier_score_loss, cohen_kappa_score,
                             confusion_matrix, f1_score, log_loss,
                             mean_absolute_error, mean_squared_error,
                             roc_auc_score)
from statsmodels.stats.contingency_tables import mcnemar

EPS = 1e-15
BINS = 10


def ece_from_sklearn_bins(y, p, n_bins, strategy):
    """ECE = sum_b n_b/N |prob_true_b - prob_pred_b| over the bins that
    calibration_curve uses (same edges, same searchsorted rule)."""
    prob_true, prob_pred = calibration_curve(y, p, n_bins=n_bins, strategy=strategy)
    if strategy == "quantile":
        bins = np.percentile(p, np.linspace(0, 1, n_bins + 1) * 100)
    else:
        bins = np.linspace(0.0, 1.0, n_bins + 1)
    ids = np.searchsorted(bins[1:-1], p)
    total = np.bincount(ids, minlength=len(bins))
    counts = total[total != 0]
    ece = float(np.sum(counts / len(p) * np.abs(prob_true - prob_pred)))
    return {"prob_true": prob_true.tolist(), "prob_pred": prob_pred.tolist(),
            "counts": counts.tolist(), "ece": ece}


def noul(p, y, name):
    p = np.asarray(p, float)
    y = np.asarray(y, int)
    pc = np.clip(p, EPS, 1 - EPS)
    return {
        "name": name, "n": len(p),
        "accuracy": float(accuracy_score(y, (p >= 0.5).astype(int))),
        "brier": float(brier_score_loss(y, p)),
        # clipped before the call; sklearn would clip again at its own eps
        "log_loss": float(log_loss(y, pc, eps=EPS, labels=[0, 1])),
        "auroc": float(roc_auc_score(y, p)),
        "auprc": float(average_precision_score(y, p)),
        "calibration_uniform": ece_from_sklearn_bins(y, p, BINS, "uniform"),
        "calibration_quantile": ece_from_sklearn_bins(y, p, BINS, "quantile"),
    }


def choice(P, y, dec, name):
    P = np.asarray(P, float)
    y = np.asarray(y, int)
    dec = np.asarray(dec, int)
    K = P.shape[1]
    onehot = np.eye(K)[y]
    ptrue = np.clip(P[np.arange(len(y)), y], EPS, 1 - EPS)
    top = P.max(axis=1)
    correct = (dec == y).astype(int)
    out = {
        "name": name, "n": len(y),
        "accuracy": float(accuracy_score(y, dec)),
        "macro_f1": float(f1_score(y, dec, average="macro")),
        "confusion": confusion_matrix(y, dec, labels=list(range(K))).tolist(),
        # summed over K (range 0-2); sklearn 1.2's brier_score_loss is binary only
        "brier": float(np.mean(np.sum((P - onehot) ** 2, axis=1))),
        # no renormalisation: -mean log clip(p_true)
        "log_loss": float(-np.mean(np.log(ptrue))),
        # sklearn's log_loss renormalises rows; equal to log_loss when rows sum to 1
        "log_loss_sklearn_renormalised": float(log_loss(y, P, eps=EPS, labels=list(range(K)))),
        "calibration_uniform": ece_from_sklearn_bins(correct, top, BINS, "uniform"),
        "calibration_quantile": ece_from_sklearn_bins(correct, top, BINS, "quantile"),
    }
    return out


def score(P, s, y, name):
    P = np.asarray(P, float)
    s = np.asarray(s, float)
    y = np.asarray(y, int)
    L = P.shape[1]
    dec = P.argmax(axis=1)  # first on ties, like Go
    near = np.clip(np.floor(s + 0.5), 0, L - 1).astype(int)
    Q = np.cumsum(P, axis=1)[:, :-1]
    O = (np.arange(L - 1)[None, :] >= y[:, None]).astype(float)
    return {
        "name": name, "n": len(y),
        "exact_argmax": float(np.mean(dec == y)),
        "within_one_argmax": float(np.mean(np.abs(dec - y) <= 1)),
        "exact_nearest": float(np.mean(near == y)),
        "within_one_nearest": float(np.mean(np.abs(near - y) <= 1)),
        "disagreement": float(np.mean(near != dec)),
        "mae": float(mean_absolute_error(y, s)),
        "rmse": float(mean_squared_error(y, s, squared=False)),
        "qwk": float(cohen_kappa_score(y, dec, weights="quadratic", labels=list(range(L)))),
        "spearman": float(spearmanr(s, y).correlation),
        "rps": float(np.mean(np.sum((Q - O) ** 2, axis=1) / (L - 1))),
    }


def mcnemar_exact(b, c):
    return float(mcnemar([[10, b], [c, 10]], exact=True).pvalue)


def load(path):
    return [json.loads(l) for l in open(path, encoding="utf-8") if l.strip()]


def main():
    shared = sys.argv[1]
    out = {
        "versions": {"sklearn": sklearn.__version__, "statsmodels": statsmodels.__version__,
                     "numpy": np.__version__},
        "epsilon": EPS, "bins": BINS,
    }

    # small fixed vectors (also written into the JSON so Go reads the same inputs)
    sp = [0.9, 0.8, 0.3, 0.6, 0.5, 0.5, 0.1, 0.0, 1.0, 0.7, 0.2, 0.45, 0.3, 0.99]
    sy = [1, 0, 0, 1, 1, 0, 0, 0, 1, 1, 1, 0, 1, 1]
    out["small_noul"] = dict(noul(sp, sy, "small_noul"), p=sp, y=sy)

    cP = [[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4], [0.5, 0.4, 0.1],
          [0.2, 0.2, 0.6], [0.0, 1.0, 0.0], [0.34, 0.33, 0.33], [0.6, 0.3, 0.1]]
    cy = [0, 1, 2, 1, 0, 1, 2, 0]
    cdec = [int(np.argmax(r)) for r in cP]
    out["small_choice"] = dict(choice(cP, cy, cdec, "small_choice"), probs=cP, y=cy, dec=cdec)

    sP = [[0.1, 0.6, 0.3, 0.0], [0.0, 0.1, 0.2, 0.7], [0.5, 0.5, 0.0, 0.0],
          [0.25, 0.25, 0.25, 0.25], [0.0, 0.0, 1.0, 0.0], [0.7, 0.2, 0.1, 0.0],
          [0.0, 0.4, 0.6, 0.0], [0.3, 0.0, 0.0, 0.7]]
    ss = [float(np.dot(r, np.arange(4))) for r in sP]
    sy2 = [1, 3, 0, 2, 2, 1, 2, 0]
    out["small_score"] = dict(score(sP, ss, sy2, "small_score"), probs=sP, score=ss, y=sy2)

    out["mcnemar"] = [{"b": b, "c": c, "p": mcnemar_exact(b, c)}
                      for b, c in [(0, 0), (1, 0), (3, 1), (5, 0), (2, 8), (10, 4), (12, 12), (30, 18)]]

    # real recordings
    em = {r["id"]: r for r in load(f"{shared}/entity-merge/recorded.jsonl")}
    eml = load(f"{shared}/entity-merge/dataset.jsonl")
    opts = ["merge", "keep_separate", "curator", "unknown"]
    p, y, P, ya, dec = [], [], [], [], []
    for it in eml:
        ans = em[it["id"]]["response"]["answers"]
        p.append(ans["same_entity"]["noul"])
        y.append(1 if it["labels"]["same_entity"] else 0)
        a = ans["action"]
        P.append([a["probabilities"][o] for o in opts])
        ya.append(opts.index(it["labels"]["action"]))
        dec.append(opts.index(a["choice"]))
    out["entity_merge_same_entity"] = noul(p, y, "entity-merge same_entity")
    out["entity_merge_action"] = choice(P, ya, dec, "entity-merge action")
    em_correct_noul = (np.asarray(p) >= 0.5).astype(int) == np.asarray(y)
    em_correct_choice = np.asarray(dec) == np.asarray(ya)
    b = int(np.sum(em_correct_noul & ~em_correct_choice))
    c = int(np.sum(~em_correct_noul & em_correct_choice))
    out["entity_merge_mcnemar_noul_vs_action"] = {
        "b": b, "c": c,
        "p": float(mcnemar([[int(np.sum(em_correct_noul & em_correct_choice)), b],
                            [c, int(np.sum(~em_correct_noul & ~em_correct_choice))]], exact=True).pvalue)}

    cs = {r["id"]: r for r in load(f"{shared}/citation-support/recorded.jsonl")}
    csl = load(f"{shared}/citation-support/dataset.jsonl")
    p, y, P, s, yl = [], [], [], [], []
    for it in csl:
        ans = cs[it["id"]]["response"]["answers"]
        p.append(ans["supports"]["noul"])
        y.append(1 if it["labels"]["supports"] else 0)
        a = ans["coverage"]
        P.append([a["probabilities"][str(l)] for l in range(4)])
        s.append(a["score"])
        yl.append(it["labels"]["coverage"])
    out["citation_support_supports"] = noul(p, y, "citation-support supports")
    out["citation_support_coverage"] = score(P, s, yl, "citation-support coverage")
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
