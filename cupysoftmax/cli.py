"""The `cupysoftmax` command: time, bench, list, info, build. A thin layer over bench, suite, loader and the registry."""
from __future__ import annotations

import json
import sys

import click

from . import dtypes
from . import variants as registry
from .errors import NoDevice


def _need_device() -> None:
    from . import device

    try:
        device.require()
    except NoDevice as exc:
        click.echo(f"cupysoftmax: {exc}", err=True)
        sys.exit(1)


def _variants(values: tuple[str, ...]) -> list[str]:
    names: list[str] = []
    for value in values or (registry.AUTO,):
        for name in value.split(","):
            if name == "all":
                names += [n for n in registry.VARIANTS if n not in names]
            elif name == registry.AUTO or name in registry.VARIANTS:
                names.append(name)
            else:
                raise click.BadParameter(
                    f"unknown variant {name!r}; choose auto, all or one of: {', '.join(registry.VARIANTS)}",
                    param_hint="--variant",
                )
    return names


def _fmt(value, spec: str) -> str:
    return "-" if value is None else format(value, spec)


@click.group()
def main():
    """Softmax kernels for CuPy: time them, list them, build them."""


@main.command("time")
@click.argument("m", type=click.IntRange(min=1))
@click.argument("n", type=click.IntRange(min=1))
@click.option("--dtype", default="float32", show_default=True,
              type=click.Choice([dtypes.name(d) for d in dtypes.SUPPORTED]))
@click.option("--variant", "variant_opts", multiple=True,
              help="auto (default), all, or a variant name; repeat or comma-separate for several.")
@click.option("--repeat", default=50, show_default=True, type=click.IntRange(min=1), help="timed calls per variant")
@click.option("--op", default=registry.SOFTMAX, show_default=True,
              type=click.Choice([registry.SOFTMAX, registry.LOG_SOFTMAX, *registry.BACKWARD]))
@click.option("--json", "as_json", is_flag=True, help="print JSON records instead of a table")
def time_cmd(m, n, dtype, variant_opts, repeat, op, as_json):
    """Check each variant against the float64 reference, then time it on an M x N softmax (last axis)."""
    names = _variants(variant_opts)
    _need_device()
    from . import bench, device

    import cupy

    copy_us, rows = bench.time_shape(m, n, dtype, names, repeat=repeat, op=op)
    if as_json:
        click.echo(json.dumps(bench.as_records(m, n, dtype, copy_us, rows, op), indent=1))
    else:
        facts = device.facts(cupy.cuda.Device().id)
        nbytes = bench.moved_bytes(m, n, dtypes.parse(dtype), op)
        click.echo(f"{facts.name}: {op} over the last axis of {m} x {n} {dtype}, "
                   f"{nbytes / 1e6:.1f} MB moved; copy of the same bytes {copy_us:.1f} us "
                   f"({nbytes / copy_us / 1e3:.0f} GB/s)")
        header = f"{'variant':<22}{'knobs':>8}{'grid':>8}{'block':>6}{'smem B':>8}{'regs':>5}{'median us':>11}" \
                 f"{'GB/s':>7}{'% copy':>7}{'max err':>9}  check"
        click.echo(header)
        for r in rows:
            if r.median_us is None and not r.ok and r.grid is None:
                click.echo(f"{r.variant:<22}  cannot serve: {r.note}")
                continue
            check = "ok" if r.ok else f"FAIL {r.note}".strip()
            knobs = ",".join(map(str, r.knobs)) or "-"
            click.echo(f"{r.variant:<22}{knobs:>8}{r.grid:>8}{r.block:>6}{r.smem:>8}{r.regs:>5}{_fmt(r.median_us, '.1f'):>11}"
                       f"{_fmt(r.GBps, '.0f'):>7}{_fmt(r.pct_copy, '.0f'):>7}{_fmt(r.max_err, '.2f'):>9}  {check}")
    if any(not r.ok and r.grid is not None for r in rows):
        sys.exit(1)


@main.command("bench")
@click.option("--suite", "suite_path", default="scripts/suite.json", show_default=True,
              type=click.Path(dir_okay=False), help="suite JSON: {\"shapes\": [{tag, M, N, dtype}, ...]}")
@click.option("--out", "out_dir", default="docs/perf", show_default=True, type=click.Path(file_okay=False),
              help="folder for suite-<gpu>.json/.md/.png and sweep-<gpu>.json")
@click.option("--providers", default=None, help="comma-separated subset of the providers (default: all)")
@click.option("--ops", default=None,
              help="comma-separated: forward (softmax, the default), log_softmax, backward (softmax's gradient), "
                   "log_softmax_backward, axis (softmax over a middle axis: suite.AXIS_SHAPES, not the suite's)")
@click.option("--repeat", default=50, show_default=True, type=click.IntRange(min=1), help="timed calls per provider")
@click.option("--no-sweep", is_flag=True, help="skip the N sweep of cupysoftmax at M = 4096")
@click.option("--no-plot", is_flag=True, help="skip the PNG")
def bench_cmd(suite_path, out_dir, providers, ops, repeat, no_sweep, no_plot):
    """Check and time cupysoftmax against its peers (torch, torch.compile, Triton, Liger, cupyx, JAX) on a suite."""
    from . import suite

    try:
        names = suite.provider_names(providers)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--providers") from None
    try:
        op_list = suite.op_names(ops)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--ops") from None
    try:
        shapes = suite.load_shapes(suite_path)
    except (OSError, ValueError) as exc:
        raise click.BadParameter(str(exc), param_hint="--suite") from None
    _need_device()
    suite.main(shapes, names, out_dir, repeat=repeat, with_sweep=not no_sweep, with_plot=not no_plot,
               echo=click.echo, ops=op_list)


@main.command("list")
def list_cmd():
    """The variants, their ideas, how often they read each input element and what they compute."""
    click.echo(variant_table())


def variant_table() -> str:
    """The variant table as markdown, from the registry (README's table is checked against it)."""
    lines = ["| variant | idea | reads of x | computes | scale=, where= | from |", "|---|---|---:|---|---|---|"]
    lines += [f"| `{v.name}` | {v.idea} | {v.reads} | {', '.join(v.ops)} | {'yes' if v.fused else 'no'} | {v.seed} |"
              for v in registry.VARIANTS.values()]
    return "\n".join(lines)


@main.command("info")
def info_cmd():
    """The GPU, CuPy, CUDA and NVRTC versions, and where the kernels are read from."""
    _need_device()
    import cupy

    from . import device, loader

    f = device.facts(cupy.cuda.Device().id)
    runtime = cupy.cuda.runtime
    major, minor = cupy.cuda.nvrtc.getVersion()
    click.echo(f"GPU          {f.name} (sm_{f.compute_capability[0]}{f.compute_capability[1]}), {f.sms} SMs, "
               f"L2 {f.l2_bytes // 2**20} MiB")
    click.echo(f"shared mem   {f.smem_per_block} B per block, {f.smem_per_block_optin} B opt-in, "
               f"{f.smem_per_sm} B per SM")
    click.echo(f"CuPy         {cupy.__version__}")
    click.echo(f"CUDA         runtime {runtime.runtimeGetVersion()}, driver {runtime.driverGetVersion()}")
    click.echo(f"NVRTC        {major}.{minor}")
    click.echo(f"kernels      {loader.kernel_dir()}")


@main.command("build")
@click.option("--arch", default="sm_80,sm_90", show_default=True, help="comma-separated targets")
def build_cmd(arch):
    """Compile every kernel instantiation offline (no GPU needed); fail on a compile error or a spill."""
    from . import loader

    failed = False
    click.echo(f"{'arch':<6}{'kernel':<52}{'regs':>5}{'spill st':>9}{'spill ld':>9}{'stack':>6}{'smem B':>7}")
    for target in arch.split(","):
        try:
            reports = loader.build(target.strip())
        except loader.BuildError as exc:
            click.echo(f"cupysoftmax: compile error: {exc}", err=True)
            sys.exit(1)
        for r in reports:
            spilled = r.spill_stores or r.spill_loads or r.stack_bytes
            failed |= bool(spilled)
            click.echo(f"{r.arch:<6}{r.expression:<52}{r.registers:>5}{r.spill_stores:>9}{r.spill_loads:>9}"
                       f"{r.stack_bytes:>6}{r.static_smem:>7}{'  SPILL' if spilled else ''}")
    if failed:
        click.echo("cupysoftmax: some kernels spill to local memory", err=True)
        sys.exit(1)
