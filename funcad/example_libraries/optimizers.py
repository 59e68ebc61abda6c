"""funcad.example_libraries.optimizers: JAX's optimizers as (init, update, get_params)
triples over pytrees, learning-rate schedules, clip_grads/l2_norm and state packing.

>>> import funcad, funcad.numpy as fnp
>>> opt_init, opt_update, get_params = adam(0.1)
>>> state = opt_init(fnp.array([1.0, -2.0]))
>>> for i in range(3):
...     state = opt_update(i, funcad.grad(lambda x: fnp.sum(x ** 2))(get_params(state)), state)
>>> get_params(state).round(4)
Array([ 0.7016, -1.7006], dtype=float64)
"""
from ._optimizers import (JoinPoint, Optimizer, OptimizerState, Schedule, adagrad, adam, adamax,
                          clip_grads, constant, exponential_decay, inverse_time_decay, l2_norm,
                          make_schedule, momentum, nesterov, optimizer, pack_optimizer_state,
                          piecewise_constant, polynomial_decay, rmsprop, rmsprop_momentum, sgd, sm3,
                          unpack_optimizer_state)

__all__ = ["JoinPoint", "Optimizer", "OptimizerState", "Schedule", "adagrad", "adam", "adamax",
           "clip_grads", "constant", "exponential_decay", "inverse_time_decay", "l2_norm",
           "make_schedule", "momentum", "nesterov", "optimizer", "pack_optimizer_state",
           "piecewise_constant", "polynomial_decay", "rmsprop", "rmsprop_momentum", "sgd", "sm3",
           "unpack_optimizer_state"]
