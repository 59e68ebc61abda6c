"""PJRT plumbing for funcad: client, compile, transfer, execute.

These notes were checked by experiment against jax 0.10.2 / jaxlib 0.10.2 (CPU only;
no GPU on the test machine). funcad does its own tracing and emits textual
StableHLO. jax/jaxlib are used here ONLY as device plumbing:

  * client   : ``jax.extend.backend.get_backend(platform)`` -> ``jaxlib._jax.Client``
  * options  : ``jax.extend.backend.get_compile_options(1, 1, device_assignment=[dev],
               backend=client)`` (a public jax.extend API. Sets device assignment and,
               on GPU, the CUDA data dir. A bare ``xla_client.CompileOptions()`` also
               works on a single-device CPU host).
  * compile  : ``client.compile_and_load(mlir_text: str | bytes, [device], options)``.
               Plain MLIR text works (str or utf-8 bytes). MLIR bytecode also works, but
               it is no faster (~25 ms for a tiny module either way), so there is no need
               for jaxlib.mlir.ir or serialize_portable_artifact.
  * transfer : ``xla_client.batched_device_put(aval, SingleDeviceSharding(dev), [np_arr],
               [dev], committed=True, force_copy=False, host_buffer_semantics=
               IMMUTABLE_ONLY_DURING_CALL, enable_x64=True)``. ``aval`` is the public
               ``jax.core.ShapedArray(shape, dtype)``. ``Client.buffer_from_pyval`` no
               longer exists in 0.10.x.
  * execute  : ``exe.execute_sharded(list_of_arrays).disassemble_into_single_device_arrays()``
               -> list (one per result) of lists (one per device). We take ``[0]``.
               ``exe.execute(args)`` is the same thing as a Python wrapper in xla_client.
  * readback : ``np.asarray(arr)`` (read-only, zero-copy view on CPU).

Nothing here imports jax._src, or calls jax.jit / jax.lax / jax.numpy / jax.grad.

Pitfalls found (see the self-test):
  1. batched_device_put defaults to HostBufferSemantics.ZERO_COPY. On CPU that ALIASES
     the NumPy memory when the array is 64-byte aligned (writeable or not). Later
     mutations of the ndarray then show up in the "device" buffer, and a donated
     buffer would write into the user's ndarray. Use IMMUTABLE_ONLY_DURING_CALL
     (a synchronous copy). It costs only about 1 us more for small arrays.
  2. enable_x64 must be True. With None/False, a float64 ndarray is silently stored
     as f32 while the aval still says float64, and jax.device_put also downcasts to
     f32 when jax_enable_x64 is off. With enable_x64=True, f64/i64/c128 round-trip
     exactly, and f64 StableHLO compiles and runs without touching jax's x64 flag.
  3. Tuple-typed results (``-> tuple<...>``) are REJECTED ("Invalid XLA PrimitiveType:
     13 (TUPLE)"). Emit multiple results (``-> (tensor<..>, tensor<..>)``). They come
     back as a flat list of arrays, in order.
  4. The device list passed to compile_and_load must agree with
     options.device_assignment. A bare CompileOptions() assigns replica 0 to device 0
     even if you pass [dev1]. Execution then fails ("replica is assigned to device
     cpu:0"), so always use get_compile_options(..., device_assignment=[dev]).
  5. Inputs are checked at execute time: a wrong dtype or shape, or an array on the
     wrong device, raises ``jaxlib._jax.JaxRuntimeError`` (INVALID_ARGUMENT), and
     XLA also logs an "E..." line to stderr.
  6. The returned arrays are ``jaxlib._jax.ArrayImpl`` (a subclass of jax.Array). Their
     arithmetic methods (.sum(), +, ...) dispatch into jax.numpy/jit, so funcad must
     wrap them and only use .shape/.dtype/np.asarray/block_until_ready/delete/
     is_deleted/devices().
  7. Compiling costs ~25-40 ms even for tiny modules, so cache executables per
     (mlir text, device).

Donation: put ``{tf.aliasing_output = <out_idx> : i32}`` (exact output) or
``{jax.buffer_donor = true}`` (let XLA pick) on the ``func.func @main`` argument.
Both show up as ``input_output_alias={...may-alias}`` in the compiled HLO. At
execute time, the donated input ArrayImpl is deleted (``is_deleted() -> True``)
and its memory is reused for the output. If something still holds the buffer (for
example a live ``np.asarray`` view), PJRT silently copies instead and the input
stays alive. Passing the same array twice when one of the uses is donated is an
error.

GPU detection: ``jax.extend.backend.get_backend("gpu")`` raises RuntimeError
("Unknown backend: 'gpu' requested, but no platforms that are instances of gpu are
present") when no CUDA/ROCm plugin or device exists. ``jax.extend.backend.backends()``
lists the platforms that initialised (here ``{'cpu': ...}``). Do not probe "tpu":
it tries to dlopen libtpu.so and logs an error.
"""

from __future__ import annotations

import functools
import time
from typing import Sequence

import numpy as np

import jax.extend.backend as _jeb  # public: get_backend, backends, get_compile_options
from jaxlib import xla_client as _xc  # public-ish jaxlib module: Client, CompileOptions, ...

try:  # public abstract value class; the C++ side reads .shape/.dtype/.weak_type
    from jax.core import ShapedArray as _ShapedArray
except ImportError:  # pragma: no cover - fallback: duck-typed aval also works
    class _ShapedArray:  # type: ignore[no-redef]
        def __init__(self, shape, dtype, weak_type=False):
            self.shape, self.dtype, self.weak_type = tuple(shape), np.dtype(dtype), weak_type

Client = _xc.Client
LoadedExecutable = _xc.LoadedExecutable
DeviceArray = _xc.ArrayImpl  # type of device buffers in and out of execute
JaxRuntimeError = getattr(_xc._xla, "JaxRuntimeError", RuntimeError)

_COPY = _xc.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL  # never alias host memory

# --------------------------------------------------------------------------- clients


@functools.lru_cache(maxsize=None)
def get_client(platform: str = "cpu") -> Client:
    """PJRT client for "cpu" or "gpu" ("cuda"/"rocm" also accepted). Raises RuntimeError
    if the platform is not available."""
    return _jeb.get_backend(platform)


@functools.lru_cache(maxsize=None)
def gpu_available() -> bool:
    """True iff a CUDA/ROCm PJRT backend with at least one device is available.
    Never crashes: if there is no plugin or no device, jax raises RuntimeError, which we
    catch."""
    try:
        client = _jeb.get_backend("gpu")
    except RuntimeError:
        return False
    return client.platform in ("gpu", "cuda", "rocm") and len(client.local_devices()) > 0


def available_platforms() -> list[str]:
    """Names of the backends that initialised, e.g. ['cpu'] or ['cpu', 'cuda']."""
    return sorted(_jeb.backends().keys())


def default_device(client: Client):
    return client.local_devices()[0]


# --------------------------------------------------------------------------- compile


def compile_options(client: Client, device=None) -> _xc.CompileOptions:
    """Single-replica, single-partition options pinned to `device`."""
    device = device if device is not None else default_device(client)
    return _jeb.get_compile_options(
        num_replicas=1, num_partitions=1, device_assignment=[device], backend=client
    )


def compile_mlir(client: Client, mlir_text: str, device=None) -> LoadedExecutable:
    """Compile a textual StableHLO module (entry point `func.func public @main`).

    Multiple results are fine (they come back flattened). Tuple-typed results are not.
    Raises JaxRuntimeError carrying the MLIR parse or verify error message.
    """
    device = device if device is not None else default_device(client)
    return client.compile_and_load(mlir_text, [device], compile_options(client, device))


# --------------------------------------------------------------------------- transfer


@functools.lru_cache(maxsize=4096)
def _aval(shape: tuple, dtype: np.dtype):
    return _ShapedArray(shape, dtype)


@functools.lru_cache(maxsize=None)
def _sharding(device):
    return _xc.SingleDeviceSharding(device)


def to_device(client: Client, x, device=None) -> DeviceArray:
    """Copy a NumPy array (or scalar) to `device` (defaults to the client's first device).

    The dtype is kept exactly, float64 included, whatever jax's x64 flag says. The host
    memory is copied, never aliased. An existing device array on the right device is
    returned unchanged.
    """
    device = device if device is not None else default_device(client)
    if isinstance(x, DeviceArray):
        if x.devices() == {device}:
            return x
        x = np.asarray(x)  # cross-device: host round trip (rare in funcad)
    x = np.asarray(x)
    return _xc.batched_device_put(
        _aval(x.shape, x.dtype), _sharding(device), [x], [device],
        committed=True, force_copy=False, host_buffer_semantics=_COPY, enable_x64=True,
    )


def to_numpy(buf: DeviceArray) -> np.ndarray:
    """Device -> host. Blocks. On CPU this is a read-only zero-copy view."""
    return np.asarray(buf)


# --------------------------------------------------------------------------- execute


def execute(executable: LoadedExecutable, buffers: Sequence[DeviceArray]) -> list[DeviceArray]:
    """Launch asynchronously and return one device array per result of @main.

    The outputs can be fed straight into another executable (no host round trip).
    Call .block_until_ready() or np.asarray() to synchronise.
    """
    res = executable.execute_sharded(list(buffers))
    return [shards[0] for shards in res.disassemble_into_single_device_arrays()]


def make_fast_executor(executable: LoadedExecutable, out_shapes_dtypes, device):
    """A slightly faster execute for the case where funcad already knows the output
    avals (it emitted the module). It prebuilds C++ result handlers and skips the
    per-call list-of-lists. Saves about 1 us per call."""
    sh = _sharding(device)
    handlers = [_xc.array_result_handler(_aval(tuple(s), np.dtype(d)), sh, True,
                                         _skip_checks=True)
                for s, d in out_shapes_dtypes]

    def run(buffers):
        return executable.execute_sharded(list(buffers)).consume_with_handlers(handlers)
    return run


def block(buffers: Sequence[DeviceArray]) -> None:
    for b in buffers:
        b.block_until_ready()


# --------------------------------------------------------------------------- self-test

_SINE = """module @m { func.func public @main(%arg0: tensor<3xf32>) -> (tensor<3xf32>) {
  %0 = stablehlo.sine %arg0 : tensor<3xf32>
  return %0 : tensor<3xf32> } }"""

_F64 = """module @m { func.func public @main(%a: tensor<2x3xf64>, %b: tensor<f64>)
    -> (tensor<2x3xf64>, tensor<i64>) {
  %0 = stablehlo.broadcast_in_dim %b, dims = [] : (tensor<f64>) -> tensor<2x3xf64>
  %1 = stablehlo.multiply %a, %0 : tensor<2x3xf64>
  %2 = stablehlo.constant dense<7> : tensor<i64>
  return %1, %2 : tensor<2x3xf64>, tensor<i64> } }"""

_AXPB = """module @m { func.func public @main(%x: tensor<4xf32>) -> (tensor<4xf32>) {
  %c2 = stablehlo.constant dense<2.0> : tensor<4xf32>
  %c1 = stablehlo.constant dense<1.0> : tensor<4xf32>
  %0 = stablehlo.multiply %x, %c2 : tensor<4xf32>
  %1 = stablehlo.add %0, %c1 : tensor<4xf32>
  return %1 : tensor<4xf32> } }"""

_DONATE = """module @m { func.func public @main(%a: tensor<4xf32> {tf.aliasing_output = 0 : i32})
    -> tensor<4xf32> {
  %0 = stablehlo.add %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32> } }"""


def _bench(fn, n=20000, reps=5) -> float:
    for _ in range(min(n, 500)):
        fn()
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - t) / n)
    return best * 1e6


def _self_test() -> None:
    import jax  # only for version printing
    import jaxlib
    print(f"jax {jax.__version__}  jaxlib {jaxlib.__version__}")
    print("platforms:", available_platforms(), " gpu_available:", gpu_available())

    client = get_client("cpu")
    dev = default_device(client)

    t = time.perf_counter()
    sine = compile_mlir(client, _SINE)
    print(f"compile sine: {(time.perf_counter() - t) * 1e3:.1f} ms")
    x = np.array([0.0, 1.0, 2.0], np.float32)
    (y,) = execute(sine, [to_device(client, x)])
    assert type(y) is DeviceArray and y.shape == (3,) and y.dtype == np.float32
    np.testing.assert_allclose(to_numpy(y), np.sin(x), rtol=1e-6)
    print("sine:", to_numpy(y))

    # f64 without jax x64: dtype and exact values preserved; multi-result is flattened
    f64 = compile_mlir(client, _F64)
    a = np.arange(6.0).reshape(2, 3) + 1e-12
    out, seven = execute(f64, [to_device(client, a), to_device(client, np.float64(3.0))])
    assert out.dtype == np.float64 and seven.dtype == np.int64
    assert np.array_equal(to_numpy(out), a * 3.0) and int(to_numpy(seven)) == 7
    print("f64 ok:", out.dtype, to_numpy(out)[0], " int64 result:", to_numpy(seven))

    # host memory is not aliased
    h = np.zeros(16, np.float32)
    hb = to_device(client, h)
    h[0] = 99.0
    assert to_numpy(hb)[0] == 0.0

    # chaining without a host round trip, plus donation
    axpb = compile_mlir(client, _AXPB)
    b = to_device(client, np.arange(4, dtype=np.float32))
    (c1,) = execute(axpb, [b])
    (c2,) = execute(axpb, [c1])
    assert np.array_equal(to_numpy(c2), (np.arange(4) * 2 + 1) * 2 + 1)
    don = compile_mlir(client, _DONATE)
    d_in = to_device(client, np.ones(4, np.float32))
    (d_out,) = execute(don, [d_in])
    print("donation: input deleted =", d_in.is_deleted(), " out =", to_numpy(d_out))

    # errors surface as exceptions, not crashes
    try:
        execute(axpb, [to_device(client, np.zeros(4, np.float64))])
        raise AssertionError("dtype mismatch not detected")
    except JaxRuntimeError:
        pass

    # timings
    fast = make_fast_executor(axpb, [((4,), np.float32)], dev)
    xn = np.arange(4, dtype=np.float32)

    def chain10():
        z = b
        for _ in range(10):
            (z,) = execute(axpb, [z])
        z.block_until_ready()

    print("timings (best of 5, us/call), f32[4] x*2+1:")
    print(f"  execute (async, no sync)            {_bench(lambda: execute(axpb, [b])):7.2f}")
    print(f"  execute + block_until_ready         "
          f"{_bench(lambda: execute(axpb, [b])[0].block_until_ready()):7.2f}")
    print(f"  fast executor (result handlers)     {_bench(lambda: fast([b])):7.2f}")
    print(f"  chain of 10 dependent calls / 10    {_bench(chain10, 2000) / 10:7.2f}")
    print(f"  to_device(np f32[4])                {_bench(lambda: to_device(client, xn)):7.2f}")
    print(f"  to_device + execute + to_numpy      "
          f"{_bench(lambda: to_numpy(execute(axpb, [to_device(client, xn)])[0])):7.2f}")
    print("self-test OK")


if __name__ == "__main__":
    _self_test()
