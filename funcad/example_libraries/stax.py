"""funcad.example_libraries.stax: JAX's stax layers, each an (init_fun, apply_fun)
pair, and the serial/parallel combinators.

>>> import funcad, funcad.random as fr, funcad.numpy as fnp
>>> init, apply = serial(Dense(8), Relu, Dense(3), LogSoftmax)
>>> _, params = init(fr.PRNGKey(0), (-1, 4))
>>> apply(params, fnp.ones((2, 4))).shape
(2, 3)
"""
from ._stax import (AvgPool, BatchNorm, Conv, Conv1DTranspose, ConvTranspose, Dense, Dropout, Elu,
                    Exp, FanInConcat, FanInSum, FanOut, Flatten, Gelu, GeneralConv,
                    GeneralConvTranspose, Identity, LeakyRelu, LogSoftmax, MaxPool, Relu, Selu,
                    Sigmoid, Softmax, Softplus, SumPool, Tanh, elementwise, elu, gelu, glorot,
                    glorot_normal, leaky_relu, log_softmax, logsoftmax, normal, ones, parallel, randn,
                    relu, selu, serial, shape_dependent, sigmoid, softmax, softplus, standardize,
                    zeros)

__all__ = ["AvgPool", "BatchNorm", "Conv", "Conv1DTranspose", "ConvTranspose", "Dense",
           "Dropout", "Elu", "Exp", "FanInConcat", "FanInSum", "FanOut", "Flatten", "Gelu",
           "GeneralConv", "GeneralConvTranspose", "Identity", "LeakyRelu", "LogSoftmax", "MaxPool",
           "Relu", "Selu", "Sigmoid", "Softmax", "Softplus", "SumPool", "Tanh", "elementwise", "elu",
           "gelu", "glorot", "glorot_normal", "leaky_relu", "log_softmax", "logsoftmax", "normal",
           "ones", "parallel", "randn", "relu", "selu", "serial", "shape_dependent", "sigmoid",
           "softmax", "softplus", "standardize", "zeros"]
