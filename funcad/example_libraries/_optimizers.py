"""The implementation of funcad.example_libraries.optimizers: JAX's (init, update,
get_params) optimizer triples over pytrees, learning-rate schedules and helpers."""
from __future__ import annotations

import functools
from collections import namedtuple
from typing import Any, Callable, NamedTuple

from .. import numpy as fnp
from ..core.avals import aval_of
from ..core.errors import FuncadTypeError, FuncadValueError
from ..core.pytree import register_pytree_node, tree_flatten, tree_map, tree_unflatten

OptimizerState = namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])
OptimizerState.__doc__ = """An optimizer's state over a pytree of parameters: one flat list of
state leaves per parameter, the parameters' tree and each state's tree. A pytree
whose only child is packed_state, so it passes through jit."""
register_pytree_node(OptimizerState,
                     lambda s: ((s.packed_state,), (s.tree_def, s.subtree_defs)),
                     lambda aux, children: OptimizerState(children[0], aux[0], aux[1]))

Schedule = Callable[[int], Any]


class Optimizer(NamedTuple):
    """The triple an optimizer constructor returns."""
    init_fn: Callable
    update_fn: Callable
    params_fn: Callable


def optimizer(opt_maker: Callable) -> Callable[..., Optimizer]:
    """Decorator: an optimizer written for one array (init, update, get_params) becomes
    one for any pytree of arrays, its state an OptimizerState.

    >>> @optimizer
    ... def halve():
    ...     return (lambda x: x), (lambda i, g, x: x / 2), (lambda x: x)
    >>> init, update, get = halve()
    >>> get(update(0, {"a": 1.0}, init({"a": 4.0})))
    {'a': 2.0}
    """
    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs):
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree):
            x0_flat, tree = tree_flatten(x0_tree)
            flat = [tree_flatten(init(x0)) for x0 in x0_flat]
            return OptimizerState([f[0] for f in flat], tree, [f[1] for f in flat])

        @functools.wraps(update)
        def tree_update(i, grad_tree, opt_state):
            states_flat, tree, subtrees = opt_state
            grad_flat, tree2 = tree_flatten(grad_tree)
            if tree2 != tree:
                raise FuncadTypeError(f"optimizer update got a gradient tree {tree2} that does not match "
                                      f"the parameter tree {tree} it was initialised with")
            new_flat, new_subtrees = [], []
            for g, leaves, sub in zip(grad_flat, states_flat, subtrees):
                leaves2, sub2 = tree_flatten(update(i, g, tree_unflatten(sub, leaves)))
                if sub2 != sub:
                    raise FuncadTypeError(f"optimizer update returned a state of structure {sub2}, "
                                          f"not that of its input {sub}")
                new_flat.append(leaves2)
                new_subtrees.append(sub2)
            return OptimizerState(new_flat, tree, subtrees)

        @functools.wraps(get_params)
        def tree_get_params(opt_state):
            states_flat, tree, subtrees = opt_state
            return tree_unflatten(tree, [get_params(tree_unflatten(s, leaves))
                                         for s, leaves in zip(subtrees, states_flat)])

        return Optimizer(tree_init, tree_update, tree_get_params)
    return tree_opt_maker


# ------------------------------------------------------------ optimizers ----

@optimizer
def sgd(step_size):
    """Stochastic gradient descent: x - step_size(i) * g.

    >>> init, update, get_params = sgd(0.5)
    >>> float(get_params(update(0, 2.0, init(3.0))))
    2.0
    """
    step_size = make_schedule(step_size)
    return (lambda x0: x0), (lambda i, g, x: x - step_size(i) * g), (lambda x: x)


@optimizer
def momentum(step_size: Schedule, mass: float):
    """Gradient descent with momentum (heavy ball): v = mass * v + g; x -= step * v.

    >>> init, update, get_params = momentum(0.1, 0.9)
    >>> float(get_params(update(0, 1.0, init(0.0))))
    -0.1
    """
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * velocity, velocity
    return (lambda x0: (x0, fnp.zeros_like(x0))), update, (lambda state: state[0])


@optimizer
def nesterov(step_size: Schedule, mass: float):
    """Nesterov's accelerated gradient: the step uses mass * v + g.

    >>> init, update, get_params = nesterov(0.1, 0.9)
    >>> round(float(get_params(update(0, 1.0, init(0.0)))), 6)
    -0.19
    """
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * (mass * velocity + g), velocity
    return (lambda x0: (x0, fnp.zeros_like(x0))), update, (lambda state: state[0])


def _inv_sqrt_or_zero(s):
    # The same values as where(s > 0, 1 / sqrt(s), 0), without dividing by zero eagerly.
    pos = s > 0
    return fnp.where(pos, 1.0 / fnp.sqrt(fnp.where(pos, s, 1.0)), 0.0)


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad (Duchi et al.) with momentum on the scaled gradient.

    >>> init, update, get_params = adagrad(1.0)
    >>> round(float(get_params(update(0, 2.0, init(0.0)))), 6)
    -0.1
    """
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + fnp.square(g)
        inv_sqrt = _inv_sqrt_or_zero(g_sq)
        m = (1.0 - momentum) * (g * inv_sqrt) + momentum * m
        return x - step_size(i) * m, g_sq, m
    return ((lambda x0: (x0, fnp.zeros_like(x0), fnp.zeros_like(x0))), update,
            (lambda state: state[0]))


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """RMSProp: divide by a running root mean square of the gradients.

    >>> init, update, get_params = rmsprop(0.1)
    >>> round(float(get_params(update(0, 1.0, init(0.0)))), 6)
    -0.316228
    """
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, avg_sq = state
        avg_sq = avg_sq * gamma + fnp.square(g) * (1.0 - gamma)
        return x - step_size(i) * g / fnp.sqrt(avg_sq + eps), avg_sq
    return (lambda x0: (x0, fnp.zeros_like(x0))), update, (lambda state: state[0])


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    """RMSProp with momentum on the scaled step.

    >>> init, update, get_params = rmsprop_momentum(0.1)
    >>> round(float(get_params(update(0, 1.0, init(0.0)))), 6)
    -0.316228
    """
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, avg_sq, mom = state
        avg_sq = avg_sq * gamma + fnp.square(g) * (1.0 - gamma)
        mom = momentum * mom + step_size(i) * g / fnp.sqrt(avg_sq + eps)
        return x - mom, avg_sq, mom
    return ((lambda x0: (x0, fnp.zeros_like(x0), fnp.zeros_like(x0))), update,
            (lambda state: state[0]))


def _dtype(x):
    return aval_of(fnp.asarray(x)).dtype


def _bias_correction(b, like, i):
    return 1 - fnp.asarray(b, _dtype(like)) ** (i + 1)


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (Kingma and Ba): bias-corrected first and second moment estimates.

    >>> init, update, get_params = adam(0.1)
    >>> round(float(get_params(update(0, 3.0, init(0.0)))), 6)
    -0.1
    """
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * fnp.square(g) + b2 * v
        mhat = m / _bias_correction(b1, m, i)
        vhat = v / _bias_correction(b2, m, i)
        return x - step_size(i) * mhat / (fnp.sqrt(vhat) + eps), m, v
    return ((lambda x0: (x0, fnp.zeros_like(x0), fnp.zeros_like(x0))), update,
            (lambda state: state[0]))


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """AdaMax: Adam with the infinity norm in place of the second moment.

    >>> init, update, get_params = adamax(0.1)
    >>> round(float(get_params(update(0, 3.0, init(0.0)))), 6)
    -0.1
    """
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = fnp.maximum(b2 * u, fnp.abs(g))
        return x - (step_size(i) / _bias_correction(b1, m, i)) * m / (u + eps), m, u
    return ((lambda x0: (x0, fnp.zeros_like(x0), fnp.zeros_like(x0))), update,
            (lambda state: state[0]))


@optimizer
def sm3(step_size, momentum=0.9):
    """SM3 (Anil et al.): memory-efficient Adagrad keeping one accumulator per axis.

    >>> init, update, get_params = sm3(1.0)
    >>> get_params(update(0, fnp.array([2.0, 4.0]), init(fnp.zeros(2)))).round(6)
    Array([-0.1, -0.1], dtype=float64)
    """
    step_size = make_schedule(step_size)

    def init(x0):
        shape = fnp.shape(x0)
        x0 = fnp.atleast_1d(x0)
        return x0, fnp.zeros_like(x0), [fnp.zeros(n, _dtype(x0)) for n in fnp.shape(x0)], shape

    def update(i, g, state):
        x, m, vs, shape = state
        gnd = fnp.ndim(g)  # 0 for a scalar parameter, whose state is 1-d
        # Each axis' accumulator, broadcast along that axis; the tightest bound wins.
        spread = [fnp.expand_dims(v, tuple(a for a in range(gnd) if a != k)) if gnd else v
                  for k, v in enumerate(vs)]
        accum = functools.reduce(fnp.minimum, spread) + fnp.square(g)
        inv_sqrt = _inv_sqrt_or_zero(accum)
        m = (1.0 - momentum) * (g * inv_sqrt) + momentum * m
        x = x - step_size(i) * m
        xnd = fnp.ndim(x)
        vs = [fnp.max(accum, axis=tuple(a for a in range(xnd) if a != k)) for k in range(xnd)]
        return x, m, vs, shape
    return init, update, (lambda state: fnp.reshape(state[0], state[3]))


# -------------------------------------------------------------- schedules ----

def constant(step_size) -> Schedule:
    """The schedule that is step_size at every step.

    >>> constant(0.1)(100)
    0.1
    """
    return lambda i: step_size


def exponential_decay(step_size, decay_steps, decay_rate) -> Schedule:
    """step_size * decay_rate ** (i / decay_steps).

    >>> float(exponential_decay(1.0, 10, 0.5)(20))
    0.25
    """
    return lambda i: step_size * decay_rate ** (i / decay_steps)


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False) -> Schedule:
    """step_size / (1 + decay_rate * i / decay_steps) (the quotient floored if staircase).

    >>> float(inverse_time_decay(1.0, 10, 1.0, staircase=True)(15))
    0.5
    """
    if staircase:
        return lambda i: step_size / (1 + decay_rate * fnp.floor(i / decay_steps))
    return lambda i: step_size / (1 + decay_rate * i / decay_steps)


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0) -> Schedule:
    """From step_size to final_step_size in decay_steps steps along (1 - t) ** power, then flat.

    >>> float(polynomial_decay(1.0, 10, 0.0)(5))
    0.5
    """
    def schedule(step_num):
        step_num = fnp.minimum(step_num, decay_steps)
        return (1 - step_num / decay_steps) ** power * (step_size - final_step_size) + final_step_size
    return schedule


def piecewise_constant(boundaries, values) -> Schedule:
    """values[k] on the k-th interval between sorted boundaries (len(values) = len(boundaries) + 1).

    >>> s = piecewise_constant([10, 20], [1.0, 0.5, 0.1])
    >>> float(s(5)), float(s(15)), float(s(25))
    (1.0, 0.5, 0.1)
    """
    boundaries, values = fnp.array(boundaries), fnp.array(values)
    if not fnp.ndim(boundaries) == fnp.ndim(values) == 1:
        raise FuncadValueError("piecewise_constant: boundaries and values must be sequences")
    if fnp.shape(boundaries)[0] != fnp.shape(values)[0] - 1:
        raise FuncadValueError("piecewise_constant: values needs one entry more than boundaries, got "
                               f"{fnp.shape(values)[0]} values for {fnp.shape(boundaries)[0]} boundaries")
    return lambda i: fnp.take(values, fnp.sum(i > boundaries))  # a traced index works too


def make_schedule(scalar_or_schedule) -> Schedule:
    """A schedule as is; a scalar step size as a constant schedule.

    >>> make_schedule(0.5)(3)
    0.5
    """
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if fnp.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise FuncadTypeError(f"a step size must be a scalar or a schedule (a function of the step), got "
                          f"{type(scalar_or_schedule).__name__} of shape {fnp.shape(scalar_or_schedule)}")


# -------------------------------------------------------------- utilities ----

def l2_norm(tree):
    """The l2 norm of all the leaves of a pytree together.

    >>> float(l2_norm({"a": fnp.array([3.0]), "b": 4.0}))
    5.0
    """
    leaves, _ = tree_flatten(tree)
    return fnp.sqrt(sum(fnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree, max_norm):
    """The gradient pytree scaled down to l2 norm max_norm if its norm is larger.

    >>> clip_grads({"g": fnp.array([3.0, 4.0])}, 1.0)["g"].round(6)
    Array([0.6, 0.8], dtype=float64)
    """
    norm = l2_norm(grad_tree)
    return tree_map(lambda g: fnp.where(norm < max_norm, g, g * (max_norm / norm)), grad_tree)


class JoinPoint:
    """Marks where an optimizer state's per-parameter pytree joins the parameter tree."""

    def __init__(self, subtree):
        self.subtree = subtree

    def __iter__(self):  # look like a container of arrays, as JAX's does
        yield self.subtree


def unpack_optimizer_state(opt_state):
    """An OptimizerState as the parameter tree with a JoinPoint (holding that parameter's
    state tree) at each leaf; for serialising.

    >>> init, _, _ = momentum(0.1, 0.9)
    >>> unpack_optimizer_state(init({"w": 1.0}))["w"].subtree
    (1.0, Array(0., dtype=float64, weak_type=True))
    """
    states_flat, tree_def, subtree_defs = opt_state
    return tree_unflatten(tree_def, [JoinPoint(tree_unflatten(s, leaves))
                                     for s, leaves in zip(subtree_defs, states_flat)])


def pack_optimizer_state(marked_pytree):
    """The inverse of unpack_optimizer_state.

    >>> init, _, get_params = sgd(0.1)
    >>> get_params(pack_optimizer_state(unpack_optimizer_state(init([1.0, 2.0]))))
    [1.0, 2.0]
    """
    sentinels, tree_def = tree_flatten(marked_pytree, is_leaf=lambda x: isinstance(x, JoinPoint))
    if not all(isinstance(s, JoinPoint) for s in sentinels):
        raise FuncadTypeError("pack_optimizer_state expects the output of unpack_optimizer_state: a "
                              "pytree whose leaves are all JoinPoints")
    flat = [tree_flatten(s.subtree) for s in sentinels]
    return OptimizerState([f[0] for f in flat], tree_def, [f[1] for f in flat])
