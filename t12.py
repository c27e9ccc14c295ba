exec(open("/tmp/scr/s50/ev.py").read())
import re, json
from plait.devtools.logistic import fit_logistic
names = ["devlog"] + [f"codelog{i}" for i in range(2, 13)] + [f"chatlog{i}" for i in range(1, 7)]
import pickle
D = {n: pickle.load(open(f"/tmp/scr/s50/p100_{n}.pkl","rb")) for n in names}
ASKS = re.compile(r"\b(did|do|would|were|had|have)\s+you\b|\byou\s+(\w+\s+){0,2}(said|say|suggest\w*|recommend\w*|told|tell|advis\w*|mention\w*|gave|give|pick\w*|point\w*|put|think|thought|propos\w*|found|find|wrote|write|came up)\b|\byour\s+(fix|advice|suggestion|recommendation|idea|plan|answer|take)\b", re.I)
for n in names:
    path = f"/work/main/datasets/{n}.json"
    qt = {q["id"]: q["text"] for q in json.load(open(path))["conversations"][0]["questions"]}
    for q in D[n]: q["text"] = qt[q["qid"]]; q["asks"] = float(bool(ASKS.search(q["text"])))

def cut(q, k):
    c = dict(q)
    for key in ("ids", "scores", "feats", "user", "prev_user", "texts", "parts", "own"): c[key] = q[key][:k]
    return c
spec = M5 + ["au"]
for k in (30, 50, 100):
    DK = {n: [cut(q, k) for q in D[n]] for n in names}
    res = {}
    for held in names:
        res[held] = ev_spec(DK[held], spec, fit([q for n in names if n != held for q in DK[n]], spec))
    first = {n: ev_spec(DK[n], None, None) for n in names}
    code = np.mean([v for kk, v in res.items() if not kk.startswith("chat")], 0); chat = np.mean([v for kk, v in res.items() if kk.startswith("chat")], 0)
    ms = []
    for held in names:
        w = fit([q for n in names if n != held for q in DK[n]], spec)
        ms += [ev_spec([q], spec, w) for q in DK[held] if q["category"] == "multi-session"]
    print(k, "coding", code.round(3), "chat", chat.round(3), "multi-session", np.mean(ms, 0).round(3), "first", np.mean([v for kk, v in first.items() if not kk.startswith("chat")],0).round(3), np.mean([v for kk, v in first.items() if kk.startswith("chat")],0).round(3))
