"""Train the reader's two models from a prepared bundle: the retriever (MiniLM-L6 bi-encoder) and the reranker
(a MiniLM cross-encoder over the head of the list). One script, one process, CPU or GPU.

It runs where the project does not (the accelerator machine, which has torch, transformers, tokenizers and
safetensors but not citebound), so it imports nothing from the project: its inputs are the files
``training.reader_bundle`` writes and its outputs are plain files ``training.reader_models`` reads back.

What travels is small. The word-embedding table stays frozen during training (fine-tuning moves the encoder
layers; the table is 30,522 x 384), so the bundle carries only the rows of the tokens its texts use
(``vocab_rows.npy`` + ``vocab_emb.npy``) and the other weights in fp16; the outputs are the trained weights other
than the table, in fp16, in parts of at most ``PART_BYTES``. Putting back the package's own full table gives
exactly the model that was trained, for every token the training saw, and the base model's rows for the rest.

Steps (``run``):
1. base-model dense ranks over each code's passages -> hard negatives (a near miss's ``sounds_like`` section is
   one too) and the "before" figures on the dev splits;
2. the retriever: MultipleNegativesRankingLoss (in-batch negatives + one hard negative per question, a
   passage of the question's own gold section masked out when it stands elsewhere in the batch), scale 20;
3. "after" figures; the fine-tuned retriever's top ``RERANK_POOL`` per question -> the reranker's candidates;
4. the reranker(s): binary cross-entropy over (question, passage) pairs: the gold passage and sampled wrong
   candidates; a question no section answers gives only wrong ones (so a low score can mean "none here");
5. the reranker's figures on the dev splits (the retriever's pool, reordered).

Each phase (the retriever, each reranker) is a checkpoint: its weights and the figures so far are written when it
ends (``metrics.partial.json``); started again on the same bundle into the same folder, a run resumes after the
last finished phase.

Why long: it is one file on purpose. It runs on a machine without citebound (it travels alone with its bundle),
so it cannot share the project's modules; the retriever's and the reranker's training, figures and checkpoints
are kept together rather than in a package that would have to travel whole.

Usage: ``python training/device_reader.py BUNDLE OUT [--tiny]`` (``--tiny``: a few steps, for a CPU check).
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import sys
import time
from pathlib import Path

import numpy as np

PART_BYTES = 15 * 1024 * 1024
RERANK_POOL = 20
WORD_TABLE = "embeddings.word_embeddings.weight"


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def read_jsonl(path: Path) -> list[dict]:
    """A JSONL file, gzipped when it ends in .gz (the bundle's are)."""
    import gzip

    if not path.exists() and path.with_suffix(path.suffix + ".gz").exists():
        path = path.with_suffix(path.suffix + ".gz")
    data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    return [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]


def vocab_table(bundle: Path) -> np.ndarray:
    """The frozen word-table rows the bundle carries, float32 (int8 x a scale per row, or fp16)."""
    if (bundle / "vocab_emb_q.npy").exists():
        return np.load(bundle / "vocab_emb_q.npy").astype(np.float32) * np.load(bundle / "vocab_emb_scale.npy")
    return np.load(bundle / "vocab_emb.npy").astype(np.float32)


class Vocab:
    """Original token ids -> rows of the compact table."""

    def __init__(self, rows: np.ndarray) -> None:
        self.lookup = np.full(int(rows.max()) + 1, -1, dtype=np.int64)
        self.lookup[rows] = np.arange(len(rows))

    def __call__(self, ids: list[int]) -> list[int]:
        out = self.lookup[np.asarray(ids, dtype=np.int64)]
        if (out < 0).any():
            raise ValueError("a token outside the bundle's vocabulary (the bundle was made from other texts)")
        return out.tolist()


def load_encoder(torch, transformers, bundle: Path, layers: int, device: str):  # noqa: ANN001, ANN201
    """A BertModel over the compact vocabulary with the base weights, its first ``layers`` layers."""
    from safetensors.torch import load_file

    cfg = json.loads((bundle / "config.json").read_text())
    emb = torch.from_numpy(vocab_table(bundle))
    cfg.update(vocab_size=emb.shape[0], num_hidden_layers=layers)
    for drop in ("_name_or_path", "architectures", "transformers_version", "gradient_checkpointing", "use_cache"):
        cfg.pop(drop, None)
    model = transformers.BertModel(transformers.BertConfig(**cfg), add_pooling_layer=False)
    state = {k: v.float() for k, v in load_file(str(bundle / "base_layers.safetensors")).items()
             if not k.startswith("pooler.") and (not k.startswith("encoder.layer.") or int(k.split(".")[2]) < layers)}
    state[WORD_TABLE] = emb
    missing, unexpected = model.load_state_dict(state, strict=False)
    missing = [k for k in missing if not k.endswith("position_ids")]
    if missing or unexpected:
        raise ValueError(f"weights do not fit: missing {missing[:5]}, unexpected {unexpected[:5]}")
    model.embeddings.word_embeddings.weight.requires_grad_(False)
    return model.to(device)


def save_parts(torch, module, prefix: str, out: Path) -> list[str]:  # noqa: ANN001
    """The module's weights but the word table, fp16, in parts of at most PART_BYTES."""
    from safetensors.torch import save_file

    state = {k: v.detach().to("cpu", torch.float16).contiguous() for k, v in module.state_dict().items()
             if not k.endswith(WORD_TABLE) and not k.endswith("position_ids")}
    parts: list[dict] = [{}]
    size = 0
    for k in sorted(state):
        n = state[k].numel() * 2
        if size + n > PART_BYTES and parts[-1]:
            parts.append({})
            size = 0
        parts[-1][k] = state[k]
        size += n
    names = []
    for i, part in enumerate(parts):
        name = f"{prefix}.part{i}.safetensors"
        save_file(part, str(out / name))
        names.append(name)
    return names


def figures(ranked: dict[str, list[str]], gold: dict[str, str]) -> dict[str, float]:
    """R@1/5/10 and MRR@10 of ranked passage ids against each question's gold passage id."""
    n = len(gold)
    if not n:
        return {"n": 0}
    hits = {1: 0, 5: 0, 10: 0}
    rr = 0.0
    for qid, pid in gold.items():
        order = ranked.get(qid, [])
        if pid in order[:10]:
            rank = order.index(pid) + 1
            rr += 1.0 / rank
            for k in hits:
                hits[k] += rank <= k
    return {"n": n, **{f"r@{k}": round(v / n, 4) for k, v in hits.items()}, "mrr@10": round(rr / n, 4)}


class Trainer:
    def __init__(self, bundle: Path, out: Path, tiny: bool) -> None:
        import torch
        import transformers
        from tokenizers import Tokenizer

        self.torch, self.transformers = torch, transformers
        self.bundle, self.out, self.tiny = bundle, out, tiny
        self.params = json.loads((bundle / "params.json").read_text())
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        if self.device == "cpu":
            torch.set_num_threads(2)
        seed = self.params["seed"]
        random.seed(seed)
        np.random.seed(seed)
        torch.manual_seed(seed)
        self.tokenizer = Tokenizer.from_file(str(bundle / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.vocab = Vocab(np.load(bundle / "vocab_rows.npy"))
        self.passages = read_jsonl(bundle / "passages.jsonl")
        self.pid_of = {(p["code"], p["section"]): p["pid"] for p in self.passages}
        self.text_of = {p["pid"]: p["text"] for p in self.passages}
        self.code_pids: dict[str, list[str]] = {}
        for p in self.passages:
            self.code_pids.setdefault(p["code"], []).append(p["pid"])
        self.questions = {name: read_jsonl(bundle / f"{name}.jsonl") for name in ("train", "dev", "unseen")}
        if tiny:  # a few questions and only their codes' passages: a quick check that every step runs
            self.questions = {k: v[:48] for k, v in self.questions.items()}
            codes = {q["code"] for qs in self.questions.values() for q in qs}
            self.passages = [p for p in self.passages if p["code"] in codes][:400]
            self.pid_of = {(p["code"], p["section"]): p["pid"] for p in self.passages}
            self.code_pids = {}
            for p in self.passages:
                self.code_pids.setdefault(p["code"], []).append(p["pid"])
            self.questions = {k: [q for q in v if q["code"] in self.code_pids] for k, v in self.questions.items()}
        self.metrics: dict = {"device": self.device, "params": self.params, "counts": {
            k: len(v) for k, v in self.questions.items()}, "bundle": {
            f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in sorted(bundle.iterdir()) if f.is_file()}}
        if self.device == "cuda":
            self.metrics["device_name"] = torch.cuda.get_device_name(0)

    # -- tokens ---------------------------------------------------------------------------------------------
    def batch(self, texts: list[str], max_tokens: int, pairs: list[str] | None = None) -> dict:
        torch = self.torch
        self.tokenizer.enable_truncation(max_length=max_tokens, strategy="longest_first")
        enc = self.tokenizer.encode_batch(list(zip(texts, pairs)) if pairs is not None else texts)
        width = max(len(e.ids) for e in enc)
        ids = np.zeros((len(enc), width), dtype=np.int64)
        types = np.zeros_like(ids)
        mask = np.zeros_like(ids)
        for row, e in enumerate(enc):
            ids[row, : len(e.ids)] = self.vocab(e.ids)
            types[row, : len(e.ids)] = e.type_ids
            mask[row, : len(e.ids)] = 1
        return {k: torch.from_numpy(v).to(self.device) for k, v in
                (("input_ids", ids), ("attention_mask", mask), ("token_type_ids", types))}

    def embed(self, model, texts: list[str], max_tokens: int, grad: bool = False):  # noqa: ANN001, ANN201
        torch = self.torch
        feats = self.batch(texts, max_tokens)
        with torch.autocast(self.device, dtype=torch.bfloat16, enabled=self.device == "cuda"):
            hidden = model(**feats).last_hidden_state
        mask = feats["attention_mask"].unsqueeze(-1).float()
        pooled = (hidden.float() * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
        return torch.nn.functional.normalize(pooled, dim=-1)

    def encode_all(self, model, texts: list[str], max_tokens: int) -> np.ndarray:  # noqa: ANN001
        torch = self.torch
        if not texts:
            return np.zeros((0, model.config.hidden_size), dtype=np.float32)
        model.eval()
        out = []
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        with torch.no_grad():
            for i in range(0, len(order), 256):
                idx = order[i:i + 256]
                out.append((idx, self.embed(model, [texts[j] for j in idx], max_tokens).cpu().numpy()))
        vecs = np.zeros((len(texts), out[0][1].shape[1]), dtype=np.float32)
        for idx, v in out:
            vecs[idx] = v
        return vecs

    # -- dense ranks ----------------------------------------------------------------------------------------
    def passage_vectors(self, model) -> np.ndarray:  # noqa: ANN001
        """Every passage encoded once per model (the model object is the key: a trained model is a new one)."""
        if getattr(self, "_pvec_model", None) is not model:
            pids = [p["pid"] for p in self.passages]
            self._pvec = self.encode_all(model, [self.text_of[p] for p in pids], self.params["passage_tokens"])
            self._pvec_model = model
        return self._pvec

    def dense_ranks(self, model, questions: list[dict], k: int) -> dict[str, list[str]]:  # noqa: ANN001
        pids = [p["pid"] for p in self.passages]
        pvec = self.passage_vectors(model)
        qvec = self.encode_all(model, [q["question"] for q in questions], self.params["question_tokens"])
        row_of = {p: i for i, p in enumerate(pids)}
        ranked = {}
        for qi, q in enumerate(questions):
            rows = [row_of[p] for p in self.code_pids.get(q["code"], [])]
            if not rows:
                continue
            scores = pvec[rows] @ qvec[qi]
            top = np.argsort(-scores)[:k]
            ranked[q["id"]] = [pids[rows[t]] for t in top]
        return ranked

    def gold(self, questions: list[dict]) -> dict[str, str]:
        return {q["id"]: self.pid_of[(q["code"], q["section"])] for q in questions
                if q["section"] is not None and (q["code"], q["section"]) in self.pid_of}

    def dense_figures(self, model, tag: str) -> dict[str, dict[str, list[str]]]:  # noqa: ANN001
        ranks = {}
        for split in ("dev", "unseen"):
            qs = self.questions[split]
            ranks[split] = self.dense_ranks(model, qs, RERANK_POOL)
            self.metrics[f"retriever_{tag}_{split}"] = figures(ranks[split], self.gold(qs))
            log(f"retriever {tag} {split}: {self.metrics[f'retriever_{tag}_{split}']}")
        return ranks

    # -- schedules ------------------------------------------------------------------------------------------
    def optimiser(self, model, steps: int, lr: float):  # noqa: ANN001, ANN201
        torch = self.torch
        params = [p for p in model.parameters() if p.requires_grad]
        opt = torch.optim.AdamW(params, lr=lr, weight_decay=0.01)
        warm = max(1, int(0.1 * steps))
        sched = torch.optim.lr_scheduler.LambdaLR(
            opt, lambda s: min((s + 1) / warm, max(0.0, (steps - s) / max(1, steps - warm))))
        return opt, sched, params

    # -- the retriever --------------------------------------------------------------------------------------
    def train_retriever(self, hard: dict[str, list[str]], lr: float, epochs: int):  # noqa: ANN201
        torch = self.torch
        p = self.params
        model = self.load(6)
        train = [q for q in self.questions["train"] if q["section"] is not None and (q["code"], q["section"]) in self.pid_of]
        gold = self.gold(train)
        bs = 8 if self.tiny else p["retriever_batch"]
        epochs = 1 if self.tiny else epochs
        steps = epochs * math.ceil(len(train) / bs)
        opt, sched, params = self.optimiser(model, steps, lr)
        model.train()
        step = 0
        for epoch in range(epochs):
            random.shuffle(train)
            losses = []
            for i in range(0, len(train), bs):
                chunk = train[i:i + bs]
                pos = [gold[q["id"]] for q in chunk]
                negs = []
                for q, g in zip(chunk, pos):
                    pool = [x for x in hard.get(q["id"], []) if x != g][: p["hard_pool"]]
                    extra = []
                    if q.get("sounds_like") and (q["code"], q["sounds_like"]) in self.pid_of:
                        extra = [self.pid_of[(q["code"], q["sounds_like"])]]
                    choice = [x for x in extra if x != g] or pool
                    negs.append(random.choice(choice) if choice else random.choice(self.code_pids[q["code"]]))
                cand = pos + negs
                qv = self.embed(model, [q["question"] for q in chunk], p["question_tokens"])
                pv = self.embed(model, [self.text_of[c] for c in cand], p["passage_tokens"])
                logits = p["scale"] * qv @ pv.T
                same = torch.tensor([[c == g for c in cand] for g in pos], device=self.device)
                own = torch.zeros_like(same)
                own[torch.arange(len(chunk)), torch.arange(len(chunk))] = True
                logits = logits.masked_fill(same & ~own, float("-inf"))
                loss = torch.nn.functional.cross_entropy(logits, torch.arange(len(chunk), device=self.device))
                losses.append(self.step(loss, opt, sched, params))
                step += 1
                if self.tiny and step >= 3:
                    break
            log(f"retriever lr {lr} epoch {epoch + 1}/{epochs}: loss {np.mean(losses):.4f} ({step} steps)")
        return model, step

    def step(self, loss, opt, sched, params) -> float:  # noqa: ANN001
        """One optimiser step on ``loss`` (gradients clipped at norm 1); the loss's value."""
        opt.zero_grad()
        loss.backward()
        self.torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        sched.step()
        return float(loss.item())

    def load(self, layers: int):  # noqa: ANN201
        return load_encoder(self.torch, self.transformers, self.bundle, layers, self.device)

    # -- the reranker ---------------------------------------------------------------------------------------
    def pair_logits(self, model, head, feats: dict):  # noqa: ANN001, ANN201
        """The head over the mean of the pair's token states (the encoder was trained to pool that way)."""
        torch = self.torch
        with torch.autocast(self.device, dtype=torch.bfloat16, enabled=self.device == "cuda"):
            hidden = model(**feats).last_hidden_state
        mask = feats["attention_mask"].unsqueeze(-1).float()
        pooled = (hidden.float() * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
        return head(pooled).squeeze(-1)

    def rerank_scores(self, model, head, question: str, pids: list[str]) -> np.ndarray:  # noqa: ANN001
        feats = self.batch([question] * len(pids), self.params["rerank_tokens"], [self.text_of[x] for x in pids])
        return self.pair_logits(model, head, feats)

    def train_reranker(self, layers: int, pools: dict[str, list[str]]):  # noqa: ANN201
        torch = self.torch
        p = self.params
        model = self.load(layers)
        head = torch.nn.Linear(model.config.hidden_size, 1).to(self.device)
        torch.nn.init.normal_(head.weight, std=0.02)
        torch.nn.init.zeros_(head.bias)
        gold = self.gold(self.questions["train"])
        examples = []
        for q in self.questions["train"]:
            pool = pools.get(q["id"], [])
            g = gold.get(q["id"])
            if not pool:
                continue
            wrong = [x for x in pool if x != g]
            if q.get("sounds_like") and (q["code"], q["sounds_like"]) in self.pid_of:
                near = self.pid_of[(q["code"], q["sounds_like"])]
                if near != g and near not in wrong[: p["rerank_negatives"]]:
                    wrong = [near, *wrong]
            examples.append((q, g, wrong))
        bs = 4 if self.tiny else p["rerank_questions_per_batch"]
        epochs = 1 if self.tiny else p["rerank_epochs"]
        steps = epochs * math.ceil(len(examples) / bs)
        model.train()
        params = [x for x in model.parameters() if x.requires_grad] + list(head.parameters())
        opt = torch.optim.AdamW([{"params": [x for x in model.parameters() if x.requires_grad], "lr": p["rerank_lr"]},
                                 {"params": list(head.parameters()), "lr": p["rerank_head_lr"]}], weight_decay=0.01)
        warm = max(1, int(0.1 * steps))
        sched = torch.optim.lr_scheduler.LambdaLR(
            opt, lambda s: min((s + 1) / warm, max(0.0, (steps - s) / max(1, steps - warm))))
        step = 0
        for epoch in range(epochs):
            random.shuffle(examples)
            losses = []
            for i in range(0, len(examples), bs):
                qs, ps, labels, groups = [], [], [], []
                for q, g, wrong in examples[i:i + bs]:
                    # Half the wrong ones from the very head (the hard cases), half from the rest of the pool.
                    k = p["rerank_negatives"]
                    head_part = wrong[: max(1, k // 2)]
                    rest = wrong[len(head_part):]
                    picked = head_part + random.sample(rest, min(len(rest), k - len(head_part)))
                    if g is not None:
                        qs.append(q["question"])
                        ps.append(self.text_of[g])
                        labels.append(1.0)
                    for x in picked:
                        qs.append(q["question"])
                        ps.append(self.text_of[x])
                        labels.append(0.0)
                    groups.append((len(picked) + (g is not None), g is not None))
                feats = self.batch(qs, p["rerank_tokens"], ps)
                logits = self.pair_logits(model, head, feats)
                target = torch.tensor(labels, device=self.device)
                weight = torch.where(target > 0, torch.full_like(target, p["rerank_positive_weight"]),
                                     torch.ones_like(target))
                # Pointwise (a score that means something alone: "none of these" is possible) plus listwise (the
                # gold above its own wrong candidates: what ordering the head needs).
                loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, target, weight=weight)
                listwise = [-torch.log_softmax(part, dim=0)[0]
                            for part, (_, has_gold) in zip(torch.split(logits, [n for n, _ in groups]), groups)
                            if has_gold and len(part) > 1]
                if listwise:
                    loss = loss + torch.stack(listwise).mean()
                losses.append(self.step(loss, opt, sched, params))
                step += 1
                if self.tiny and step >= 3:
                    break
            log(f"reranker L{layers} epoch {epoch + 1}/{epochs}: loss {np.mean(losses):.4f} ({step} steps)")
        model.eval()
        self.metrics[f"reranker_L{layers}_steps"] = step
        return model, head

    def reranker_figures(self, layers: int, model, head, pools: dict[str, dict[str, list[str]]]) -> None:  # noqa: ANN001
        torch = self.torch
        for split in ("dev", "unseen"):
            qs = self.questions[split]
            ranked, top_scores = {}, []
            with torch.no_grad():
                for q in qs:
                    pool = pools[split].get(q["id"], [])
                    if not pool:
                        continue
                    scores = torch.sigmoid(self.rerank_scores(model, head, q["question"], pool)).cpu().numpy()
                    order = np.argsort(-scores, kind="stable")
                    ranked[q["id"]] = [pool[i] for i in order]
                    top_scores.append({"id": q["id"], "kind": q["kind"], "top": float(scores[order[0]]),
                                       "right": bool(q["section"] is not None and ranked[q["id"]][0] ==
                                                     self.pid_of.get((q["code"], q["section"])))})
            self.metrics[f"reranker_L{layers}_{split}"] = figures(ranked, self.gold(qs))
            self.metrics[f"reranker_L{layers}_{split}_top"] = top_scores
            log(f"reranker L{layers} {split}: {self.metrics[f'reranker_L{layers}_{split}']}")

    def checkpoint(self, phase: str, files: list[str]) -> None:
        """A finished phase: its files and the figures so far, so a stopped run resumes after it."""
        self.metrics.setdefault("files", {})[phase] = files
        (self.out / "metrics.partial.json").write_text(json.dumps(self.metrics, indent=1))

    def resumed(self) -> set[str]:
        """The phases a previous run of this bundle into this folder finished (their files present)."""
        partial = self.out / "metrics.partial.json"
        if not partial.exists():
            return set()
        before = json.loads(partial.read_text())
        if before.get("bundle") != self.metrics["bundle"]:
            return set()  # another bundle: start over
        done = {phase for phase, files in before.get("files", {}).items()
                if all((self.out / f).is_file() for f in files)}
        self.metrics.update({k: v for k, v in before.items() if k != "files"})
        self.metrics["files"] = {k: v for k, v in before.get("files", {}).items() if k in done}
        log(f"resuming: {sorted(done)} already done")
        return done

    def load_trained(self, layers: int, files: list[str], prefix: str = ""):  # noqa: ANN201
        """A model of this bundle with the trained weights of ``files`` (a checkpoint) put back."""
        from safetensors.torch import load_file

        model = self.load(layers)
        state = {}
        for name in files:
            state.update({k[len(prefix):]: v.float() for k, v in load_file(str(self.out / name)).items()
                          if k.startswith(prefix)})
        model.load_state_dict(state, strict=False)
        return model.eval()

    def run(self) -> None:
        t0 = time.time()
        done = self.resumed()
        if self.params.get("rerankers_only"):
            # The bundle's base weights are a trained retriever's: its pools, and the rerankers start from it.
            retriever = self.load(6).eval()
        elif "retriever" in done:
            retriever = self.load_trained(6, self.metrics["files"]["retriever"])
        else:
            base = self.load(6)
            hard_ranks = self.dense_ranks(base, self.questions["train"], self.params["hard_pool"] + 1)
            self.dense_figures(base, "base")
            del base
            self._pvec_model = None
            # Each run of the retriever is scored on dev (MRR@10 over the dev split); the best one is kept.
            retriever, best = None, -1.0
            for run in self.params["retriever_runs"]:
                model, steps = self.train_retriever(hard_ranks, run["lr"], run["epochs"])
                model.eval()
                self._pvec_model = None
                ranks = self.dense_ranks(model, self.questions["dev"], RERANK_POOL)
                score = figures(ranks, self.gold(self.questions["dev"])).get("mrr@10", 0.0)
                self.metrics.setdefault("retriever_runs", []).append({**run, "steps": steps, "dev_mrr@10": score})
                log(f"retriever run {run}: dev MRR@10 {score}")
                if score > best:
                    retriever, best = model, score
                    self.metrics["retriever_steps"] = steps
                    self.metrics["retriever_run"] = run
                else:
                    del model
            self.checkpoint("retriever", save_parts(self.torch, retriever, "retriever", self.out))
        self._pvec_model = None
        pools = self.dense_figures(retriever, "tuned")
        pools["train"] = self.dense_ranks(retriever, self.questions["train"], RERANK_POOL)
        del retriever
        for layers in self.params["rerank_layers"]:
            phase = f"reranker_L{layers}"
            if phase in done:
                continue
            model, head = self.train_reranker(layers, pools["train"])
            self.reranker_figures(layers, model, head, pools)
            wrapper = self.torch.nn.ModuleDict({"encoder": model, "head": head})
            self.checkpoint(phase, save_parts(self.torch, wrapper, phase, self.out))
        self.metrics["seconds"] = round(time.time() - t0, 1)
        (self.out / "metrics.json").write_text(json.dumps(self.metrics, indent=1))
        log(f"done in {self.metrics['seconds']} s")


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__)
        return 2
    out = Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    Trainer(Path(argv[0]), out, tiny="--tiny" in argv).run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
