"""Train a small MLP classifier in CuPy with cupysoftmax's log_softmax and its gradient (cross-entropy).

Data: CLASSES Gaussian clusters in FEATURES dimensions (fixed centres, fresh
noise each batch), so the loss has somewhere to go. Model: FEATURES -> HIDDEN
(ReLU) -> CLASSES. Loss: mean negative log-likelihood of the label under
cupysoftmax.log_softmax of the logits; its gradient by the logits comes from
cupysoftmax.log_softmax_backward, the rest of backprop is plain CuPy matrix
work. SGD with momentum. Prints the loss every step, writes a PNG of the loss
curve, and exits 1 unless the last tenth of the steps averages below a quarter
of the first step's loss.
Usage: python scripts/train_classifier.py [--steps 300] [--batch 4096] [--plot FILE]
"""
import argparse
import sys
import time

import numpy

import cupysoftmax

FEATURES, HIDDEN, CLASSES = 256, 512, 100


def batch(rng, centres, size):
    labels = rng.integers(0, CLASSES, size)
    x = centres[labels] + rng.standard_normal((size, FEATURES), dtype=numpy.float32)
    return x, labels


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch", type=int, default=4096)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--plot", default="train-loss.png", help="PNG of the loss curve")
    args = parser.parse_args()
    import cupy

    rng = cupy.random.default_rng(0)
    centres = rng.standard_normal((CLASSES, FEATURES), dtype=numpy.float32) * 0.5
    w1 = rng.standard_normal((FEATURES, HIDDEN), dtype=numpy.float32) * numpy.float32((2 / FEATURES) ** 0.5)
    b1 = cupy.zeros(HIDDEN, numpy.float32)
    w2 = rng.standard_normal((HIDDEN, CLASSES), dtype=numpy.float32) * numpy.float32((1 / HIDDEN) ** 0.5)
    b2 = cupy.zeros(CLASSES, numpy.float32)
    params = [w1, b1, w2, b2]
    velocity = [cupy.zeros_like(p) for p in params]
    losses = []
    rows = cupy.arange(args.batch)
    start = time.perf_counter()
    for step in range(args.steps):
        x, labels = batch(rng, centres, args.batch)
        hidden = cupy.maximum(x @ w1 + b1, 0)
        logp = cupysoftmax.log_softmax(hidden @ w2 + b2, axis=-1)
        loss = -float(logp[rows, labels].mean())
        losses.append(loss)
        dlogp = cupy.zeros_like(logp)
        dlogp[rows, labels] = -1.0 / args.batch
        dlogits = cupysoftmax.log_softmax_backward(logp, dlogp, axis=-1)
        dhidden = (dlogits @ w2.T) * (hidden > 0)
        grads = [x.T @ dhidden, dhidden.sum(axis=0), hidden.T @ dlogits, dlogits.sum(axis=0)]
        for p, v, g in zip(params, velocity, grads):
            v *= 0.9
            v -= args.lr * g
            p += v
        print(f"step {step:4d}  loss {loss:.4f}", flush=True)
    seconds = time.perf_counter() - start
    tail = numpy.mean(losses[-max(1, args.steps // 10):])
    print(f"{args.steps} steps of {args.batch} in {seconds:.1f} s; loss {losses[0]:.3f} -> {tail:.3f} "
          f"(mean of the last tenth)")
    plot(losses, args.plot)
    return 0 if tail < losses[0] / 4 else 1


def plot(losses, path):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6, 4), layout="constrained")
    ax = fig.subplots()
    ax.plot(range(len(losses)), losses)
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy (log_softmax + log_softmax_backward)")
    ax.set_yscale("log")
    ax.grid(True, alpha=0.3)
    fig.savefig(path, dpi=120)
    print(f"wrote {path}")


if __name__ == "__main__":
    sys.exit(main())
