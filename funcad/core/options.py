"""Plain flags that `funcad.config` sets and lower layers read (so they need not
import config): each is read where its option acts, and costs one module-attribute
read there. See funcad/config.py for the meanings."""

default_matmul_precision = None  # str: the precision of dot/matmul/einsum/conv given none
numpy_rank_promotion = "allow"   # 'allow' | 'warn' | 'raise'
log_compiles = False             # log each jit trace and XLA compilation (logger "funcad")
no_tracing = False               # a jit trace raises RuntimeError
no_execution = False             # a jit execution raises RuntimeError
enable_checks = False            # type-check every traced jaxpr (core.ir.typecheck)
numpy_dtype_promotion = "standard"  # 'standard' | 'strict' (core.avals.result_type checks)
explain_cache_misses = False     # log why a jitted function traces again (transforms/cache_miss.py)
enable_custom_prng = False       # PRNGKey/split/fold_in/clone return typed keys; raw keys warn
debug_key_reuse = False          # typed keys are checked for reuse (funcad/random/_key_reuse.py)
check_tracer_leaks = False       # report tracers that outlive their transformation (core/leaks.py)
softmax_custom_jvp = False        # nn.softmax differentiates by its custom rule (else the formula)
default_device = None            # a Device or a platform name: where jit and device_put place results
# Transfer guards, one level per direction ('allow', 'log', 'disallow', 'log_explicit',
# 'disallow_explicit'; lowering/transfer_guard.py). `transfer_guards` is the one flag hot
# paths read: whether any direction is guarded at all.
transfer_guard_host_to_device = "allow"
transfer_guard_device_to_device = "allow"
transfer_guard_device_to_host = "allow"
transfer_guards = False
