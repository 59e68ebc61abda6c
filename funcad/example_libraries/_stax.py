"""The implementation of funcad.example_libraries.stax: JAX's tiny neural-network
library. A layer is an (init_fun, apply_fun) pair: init_fun(rng, input_shape) ->
(output_shape, params) and apply_fun(params, inputs, **kwargs) -> outputs."""
from __future__ import annotations

import functools
import math

import numpy as np

from .. import lax, random
from .. import numpy as fnp
from ..core.avals import aval_of
from ..core.errors import FuncadValueError
from ..nn.initializers import glorot_normal, normal, ones, zeros
from ..nn import elu, gelu, leaky_relu, log_softmax, relu, selu, sigmoid, softmax, softplus, standardize

# The four initializers stax uses are funcad.nn.initializers' (JAX's stax imports them too).
glorot, randn, logsoftmax = glorot_normal, normal, log_softmax


# ---------------------------------------------------------------- layers ----

def Dense(out_dim, W_init=glorot_normal(), b_init=normal()):
    """A fully connected layer: inputs @ W + b.

    >>> init, apply = Dense(3)
    >>> out_shape, (W, b) = init(random.PRNGKey(0), (5, 2))
    >>> out_shape, W.shape, apply((W, b), fnp.ones((5, 2))).shape
    ((5, 3), (2, 3), (5, 3))
    """
    def init_fun(rng, input_shape):
        k1, k2 = random.split(rng)
        return tuple(input_shape[:-1]) + (out_dim,), (W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,)))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return fnp.dot(inputs, W) + b
    return init_fun, apply_fun


def _kernel_shape(dimension_numbers, out_chan, filter_shape, input_shape):
    lhs_spec, rhs_spec, _ = dimension_numbers
    it = iter(filter_shape)
    return [out_chan if c == "O" else input_shape[lhs_spec.index("C")] if c == "I" else next(it)
            for c in rhs_spec]


def _conv_layer(dimension_numbers, out_chan, filter_shape, strides, padding, W_init, b_init,
                output_shape_of, conv):
    """The (init, apply) pair shared by the convolution layers: `output_shape_of` is the
    lax shape helper and `conv(inputs, W, strides)` the convolution itself."""
    _, rhs_spec, out_spec = dimension_numbers
    strides = strides or (1,) * len(filter_shape)
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng, input_shape):
        kernel_shape = _kernel_shape(dimension_numbers, out_chan, filter_shape, input_shape)
        output_shape = output_shape_of(input_shape, kernel_shape, strides, padding, dimension_numbers)
        k1, k2 = random.split(rng)
        return output_shape, (W_init(k1, kernel_shape), b_init(k2, [out_chan if c == "C" else 1 for c in out_spec]))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return conv(inputs, W, strides) + b
    return init_fun, apply_fun


def GeneralConv(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID", W_init=None,
                b_init=normal(1e-6)):
    """A convolution layer in any layout, e.g. ('NHWC', 'HWIO', 'NHWC'), with a bias per channel.

    >>> init, apply = GeneralConv(("NCHW", "OIHW", "NCHW"), 4, (3, 3))
    >>> init(random.PRNGKey(0), (1, 2, 8, 8))[0]
    (1, 4, 6, 6)
    """
    one = (1,) * len(filter_shape)
    return _conv_layer(dimension_numbers, out_chan, filter_shape, strides, padding, W_init, b_init,
                       lax.conv_general_shape_tuple,
                       lambda x, W, s: lax.conv_general_dilated(x, W, s, padding, one, one,
                                                                dimension_numbers=dimension_numbers))


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))


def GeneralConvTranspose(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID",
                         W_init=None, b_init=normal(1e-6)):
    """A transposed-convolution layer (lax.conv_transpose) with a bias per channel.

    >>> init, apply = GeneralConvTranspose(("NHWC", "HWIO", "NHWC"), 4, (3, 3), (2, 2), "SAME")
    >>> init(random.PRNGKey(0), (1, 5, 5, 2))[0]
    (1, 10, 10, 4)
    """
    return _conv_layer(dimension_numbers, out_chan, filter_shape, strides, padding, W_init, b_init,
                       lax.conv_transpose_shape_tuple,
                       lambda x, W, s: lax.conv_transpose(x, W, s, padding, dimension_numbers=dimension_numbers))


Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True, beta_init=zeros, gamma_init=ones):
    """Normalise over `axis` (batch statistics), then scale by gamma and shift by beta.

    >>> init, apply = BatchNorm(axis=0)
    >>> _, params = init(random.PRNGKey(0), (4, 3))
    >>> apply(params, fnp.arange(12.0).reshape(4, 3)).mean(0).round(6)
    Array([0., 0., 0.], dtype=float64)
    """
    axis = (axis,) if np.isscalar(axis) else tuple(axis)

    def init_fun(rng, input_shape):
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = random.split(rng)
        return input_shape, (beta_init(k1, shape) if center else (), gamma_init(k2, shape) if scale else ())

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        ed = tuple(None if i in axis else slice(None) for i in range(fnp.ndim(x)))
        z = standardize(x, axis, epsilon=epsilon)
        if center and scale:
            return gamma[ed] * z + beta[ed]
        if center:
            return z + beta[ed]
        if scale:
            return gamma[ed] * z
        return z
    return init_fun, apply_fun


def elementwise(fun, **fun_kwargs):
    """A layer without parameters applying fun(inputs, **fun_kwargs).

    >>> elementwise(fnp.abs)[1]((), fnp.array([-1.0]))
    Array([1.], dtype=float64)
    """
    return (lambda rng, input_shape: (input_shape, ())), (lambda params, inputs, **kwargs: fun(inputs, **fun_kwargs))


Tanh = elementwise(fnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(fnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


def _pooling_layer(reducer, init_val, rescaler=None):
    def PoolingLayer(window_shape, strides=None, padding="VALID", spec=None):
        """A pooling layer over the spatial axes (NHWC unless spec names the layout)."""
        strides = tuple(strides or (1,) * len(window_shape))
        window_shape = tuple(window_shape)
        rescale = rescaler(window_shape, strides, padding) if rescaler else None
        non_spatial = (0, len(window_shape) + 1) if spec is None else (spec.index("N"), spec.index("C"))
        for i in sorted(non_spatial):
            window_shape = window_shape[:i] + (1,) + window_shape[i:]
            strides = strides[:i] + (1,) + strides[i:]

        def init_fun(rng, input_shape):
            pads = lax.padtype_to_pads(input_shape, window_shape, strides, padding)
            return lax.reduce_window_shape_tuple(input_shape, window_shape, strides, pads), ()

        def apply_fun(params, inputs, **kwargs):
            out = lax.reduce_window(inputs, init_val, reducer, window_shape, strides, padding)
            return rescale(out, inputs, spec) if rescale else out
        return init_fun, apply_fun
    return PoolingLayer


def _normalize_by_window_size(dims, strides, padding):
    def rescale(outputs, inputs, spec):
        nd = fnp.ndim(inputs)
        non_spatial = (0, nd - 1) if spec is None else (spec.index("N"), spec.index("C"))
        spatial = tuple(fnp.shape(inputs)[i] for i in range(nd) if i not in non_spatial)
        sizes = lax.reduce_window(fnp.ones(spatial, aval_of(fnp.asarray(inputs)).dtype), 0.0, lax.add, dims, strides, padding)
        for i in sorted(non_spatial):
            sizes = fnp.expand_dims(sizes, i)
        return outputs / sizes
    return rescale


MaxPool = _pooling_layer(lax.max, -np.inf)
SumPool = _pooling_layer(lax.add, 0.0)
AvgPool = _pooling_layer(lax.add, 0.0, _normalize_by_window_size)


def _flatten():
    def init_fun(rng, input_shape):
        return (input_shape[0], math.prod(input_shape[1:])), ()
    return init_fun, lambda params, inputs, **kwargs: fnp.reshape(inputs, (fnp.shape(inputs)[0], -1))


Flatten = _flatten()
Identity = ((lambda rng, input_shape: (input_shape, ())), (lambda params, inputs, **kwargs: inputs))


def FanOut(num):
    """A layer that passes its input on `num` times (a list), for parallel branches.

    >>> FanOut(2)[1]((), 1.0)
    [1.0, 1.0]
    """
    return (lambda rng, input_shape: ([input_shape] * num, ())), (lambda params, inputs, **kwargs: [inputs] * num)


FanInSum = ((lambda rng, input_shape: (input_shape[0], ())), (lambda params, inputs, **kwargs: sum(inputs)))


def FanInConcat(axis=-1):
    """A layer that concatenates its list of inputs along `axis`.

    >>> FanInConcat()[1]((), [fnp.ones((1, 2)), fnp.zeros((1, 1))])
    Array([[1., 1., 0.]], dtype=float64)
    """
    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        size = sum(shape[ax] for shape in input_shape)
        return tuple(input_shape[0][:ax]) + (size,) + tuple(input_shape[0][ax + 1:]), ()
    return init_fun, lambda params, inputs, **kwargs: fnp.concatenate(inputs, axis)


def Dropout(rate, mode="train"):
    """Dropout: in 'train' mode keep each entry with probability `rate` (JAX's
    convention: rate is the keep probability) and divide by it; needs rng=.

    >>> init, apply = Dropout(0.5)
    >>> apply((), fnp.ones(4), rng=random.PRNGKey(0)).shape
    (4,)
    """
    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng", None)
        if rng is None:
            raise FuncadValueError("Dropout's apply_fun needs a PRNG key: call apply_fun(params, inputs, "
                                   "rng=key) with a key from funcad.random.PRNGKey")
        if mode == "train":
            keep = random.bernoulli(rng, rate, fnp.shape(inputs))
            return fnp.where(keep, inputs / rate, 0)
        return inputs
    return (lambda rng, input_shape: (input_shape, ())), apply_fun


# ----------------------------------------------------------- combinators ----

def serial(*layers):
    """Layers applied one after another; init splits the key once per layer.

    >>> init, apply = serial(Dense(4), Relu, Dense(2), LogSoftmax)
    >>> out_shape, params = init(random.PRNGKey(0), (3, 5))
    >>> out_shape, apply(params, fnp.ones((3, 5))).shape
    ((3, 2), (3, 2))
    """
    n = len(layers)
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, n) if rng is not None else (None,) * n
        for fun, param, r in zip(apply_funs, params, rngs):
            inputs = fun(param, inputs, rng=r, **kwargs)
        return inputs
    return init_fun, apply_fun


def parallel(*layers):
    """Layers applied side by side to a list of inputs (one each); see FanOut.

    >>> init, apply = parallel(Dense(2), Identity)
    >>> shapes, params = init(random.PRNGKey(0), [(1, 3), (1, 4)])
    >>> shapes
    ((1, 2), (1, 4))
    """
    n = len(layers)
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng, input_shape):
        rngs = random.split(rng, n)
        return zip(*[init(r, shape) for init, r, shape in zip(init_funs, rngs, input_shape)])

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, n) if rng is not None else (None,) * n
        return [f(p, x, rng=r, **kwargs) for f, p, x, r in zip(apply_funs, params, inputs, rngs)]
    return init_fun, apply_fun


def shape_dependent(make_layer):
    """A layer built from the input shape by make_layer(shape) at init and at apply.

    >>> init, apply = shape_dependent(lambda shape: Dense(shape[-1]))
    >>> init(random.PRNGKey(0), (1, 3))[0]
    (1, 3)
    """
    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(fnp.shape(inputs))[1](params, inputs, **kwargs)
    return init_fun, apply_fun
