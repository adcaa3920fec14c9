"""The official SQuAD v1.1 evaluation (evaluate-v1.1.py of the SQuAD
explorer), rewritten as an independent reference for the Go scorer:
python3 evaluate_v11.py dev-v1.1.json dev_predictions.json > official_eval.json
Questions without a prediction score 0, as in the official script."""
import json
import re
import string
import sys
from collections import Counter


def normalize_answer(s):
    s = s.lower()
    s = "".join(ch for ch in s if ch not in set(string.punctuation))
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def f1_score(prediction, ground_truth):
    p = normalize_answer(prediction).split()
    g = normalize_answer(ground_truth).split()
    common = Counter(p) & Counter(g)
    num_same = sum(common.values())
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(p)
    recall = 1.0 * num_same / len(g)
    return (2 * precision * recall) / (precision + recall)


def exact_match_score(prediction, ground_truth):
    return normalize_answer(prediction) == normalize_answer(ground_truth)


def metric_max_over_ground_truths(fn, prediction, ground_truths):
    return max(fn(prediction, gt) for gt in ground_truths)


def evaluate(dataset, predictions):
    f1 = exact_match = total = 0
    for article in dataset:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                total += 1
                if qa["id"] not in predictions:
                    continue
                ground_truths = [a["text"] for a in qa["answers"]]
                prediction = predictions[qa["id"]]
                exact_match += metric_max_over_ground_truths(exact_match_score, prediction, ground_truths)
                f1 += metric_max_over_ground_truths(f1_score, prediction, ground_truths)
    return {"exact_match": 100.0 * exact_match / total, "f1": 100.0 * f1 / total, "total": total}


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        dataset = json.load(f)["data"]
    with open(sys.argv[2]) as f:
        predictions = json.load(f)
    print(json.dumps(evaluate(dataset, predictions)))
