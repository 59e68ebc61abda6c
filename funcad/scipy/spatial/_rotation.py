"""Rotation and Slerp, as JAX's scipy.spatial.transform: NamedTuples (so pytrees, as in JAX) of
unit quaternions (x, y, z, w), every conversion written with funcad.numpy over the last axis, so
one code path serves a single rotation (4,) and any stack (..., 4), and grad, vmap and jit come
free. Static arguments (axis sequences, `degrees`) choose Python branches where JAX uses
`where`: the same numbers and derivatives, fewer operations."""
from __future__ import annotations

import re
import typing

import numpy as np

from ... import numpy as fnp
from ... import random
from ...core.errors import FuncadTypeError, FuncadValueError
from ...arrays.dtypes import to_inexact

Array = typing.Any

_EULER_EPS = 1e-7  # JAX's tolerance for gimbal lock in as_euler


def _norm(v):
    return fnp.sqrt(fnp.sum(v * v, axis=-1))


def _last(x, size: int, what: str, who: str):
    if x.ndim < 1 or x.shape[-1] != size:
        raise FuncadValueError(f"{who}: expected {what} with a last axis of size {size}, got shape {x.shape}")
    return x


def _normalize(quat):
    return quat / _norm(quat)[..., None]


def _compose(p, q):
    px, py, pz, pw = (p[..., i] for i in range(4))
    qx, qy, qz, qw = (q[..., i] for i in range(4))
    return fnp.stack([pw * qx + qw * px + (py * qz - pz * qy),
                      pw * qy + qw * py + (pz * qx - px * qz),
                      pw * qz + qw * pz + (px * qy - py * qx),
                      pw * qw - px * qx - py * qy - pz * qz], axis=-1)


def _as_matrix(quat):
    x, y, z, w = (quat[..., i] for i in range(4))
    x2, y2, z2, w2 = x * x, y * y, z * z, w * w
    xy, zw, xz, yw, yz, xw = x * y, z * w, x * z, y * w, y * z, x * w
    rows = [[x2 - y2 - z2 + w2, 2 * (xy - zw), 2 * (xz + yw)],
            [2 * (xy + zw), -x2 + y2 - z2 + w2, 2 * (yz - xw)],
            [2 * (xz - yw), 2 * (yz + xw), -x2 - y2 + z2 + w2]]
    return fnp.stack([fnp.stack(r, axis=-1) for r in rows], axis=-2)


def _from_matrix(m):
    d = [m[..., i, i] for i in range(3)]
    trace = d[0] + d[1] + d[2]
    choice = fnp.argmax(fnp.stack(d + [trace], axis=-1), axis=-1)[..., None]
    # SciPy's (and JAX's) branch on the largest of the diagonal and the trace, for accuracy
    candidates = []
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        q = [None] * 4
        q[i] = 1 - trace + 2 * m[..., i, i]
        q[j] = m[..., j, i] + m[..., i, j]
        q[k] = m[..., k, i] + m[..., i, k]
        q[3] = m[..., k, j] - m[..., j, k]
        candidates.append(fnp.stack(q, axis=-1))
    quat = fnp.stack([m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0],
                      m[..., 1, 0] - m[..., 0, 1], 1 + trace], axis=-1)
    for i in (2, 1, 0):
        quat = fnp.where(choice == i, candidates[i], quat)
    return _normalize(quat)


def _from_rotvec(rotvec, degrees: bool):
    if degrees:
        rotvec = fnp.deg2rad(rotvec)
    angle = _norm(rotvec)
    angle2 = angle * angle
    small = 0.5 - angle2 / 48 + angle2 * angle2 / 3840
    tiny = angle <= 1e-3
    safe = fnp.where(tiny, 1.0, angle)  # no 0/0 in the branch not taken (nor in its derivative)
    scale = fnp.where(tiny, small, fnp.sin(safe / 2) / safe)
    return fnp.concatenate([scale[..., None] * rotvec, fnp.cos(angle / 2)[..., None]], axis=-1)


def _as_rotvec(quat, degrees: bool):
    quat = fnp.where(quat[..., 3:] < 0, -quat, quat)  # w >= 0, so that 0 <= angle <= pi
    angle = 2.0 * fnp.arctan2(_norm(quat[..., :3]), quat[..., 3])
    angle2 = angle * angle
    small = 2 + angle2 / 12 + 7 * angle2 * angle2 / 2880
    tiny = angle <= 1e-3
    safe = fnp.where(tiny, 1.0, angle)
    scale = fnp.where(tiny, small, safe / fnp.sin(safe / 2))
    if degrees:
        scale = fnp.rad2deg(scale)
    return scale[..., None] * quat[..., :3]


def _from_mrp(mrp):
    s = fnp.sum(mrp * mrp, axis=-1, keepdims=True) + 1
    return fnp.concatenate([2 * mrp[..., :3], 2 - s], axis=-1) / s


def _as_mrp(quat):
    sign = fnp.where(quat[..., 3:] < 0, -1.0, 1.0)
    return sign * quat[..., :3] / (1.0 + sign * quat[..., 3:])


def _magnitude(quat):
    return 2.0 * fnp.arctan2(_norm(quat[..., :3]), fnp.abs(quat[..., 3]))


def _make_canonical(quat):
    neg, zero = quat < 0, quat == 0
    flip = (neg[..., 3] | (zero[..., 3] & neg[..., 0]) | (zero[..., 3] & zero[..., 0] & neg[..., 1])
            | (zero[..., 3] & zero[..., 0] & zero[..., 1] & neg[..., 2]))
    return fnp.where(flip[..., None], -quat, quat)


def _parse_seq(seq: str, who: str, exactly3: bool) -> tuple[list[int], bool]:
    """The axis indices of an Euler sequence and whether it is extrinsic (lower case)."""
    if exactly3 and len(seq) != 3:
        raise FuncadValueError(f"Expected 3 axes, got {seq}.")
    if not 1 <= len(seq) <= 3:
        raise FuncadValueError(f"Expected axis specification to be a non-empty string of upto 3 "
                               f"characters, got {seq}")
    intrinsic = re.match(r"^[XYZ]{1,3}$", seq) is not None
    extrinsic = re.match(r"^[xyz]{1,3}$", seq) is not None
    if not (intrinsic or extrinsic):
        raise FuncadValueError(f"Expected axes from `seq` to be from ['x', 'y', 'z'] or "
                               f"['X', 'Y', 'Z'], got {seq}")
    if any(seq[i] == seq[i + 1] for i in range(len(seq) - 1)):
        raise FuncadValueError(f"Expected consecutive axes to be different, got {seq}")
    return ["xyz".index(c) for c in seq.lower()], extrinsic


def _elementary(axis: int, angle):
    zero = fnp.zeros_like(angle)
    parts = [zero, zero, zero, fnp.cos(angle / 2.0)]
    parts[axis] = fnp.sin(angle / 2.0)
    return fnp.stack(parts, axis=-1)


def _from_euler(seq: str, angles, degrees: bool):
    axes, extrinsic = _parse_seq(seq, "from_euler", exactly3=False)
    angles = fnp.atleast_1d(fnp.asarray(angles))
    if angles.shape[-1] != len(axes):
        raise FuncadValueError(f"from_euler: expected angles with a last axis of size len(seq) = "
                               f"{len(axes)} for seq={seq!r}, got shape {angles.shape}")
    angles = to_inexact(fnp.deg2rad(angles) if degrees else angles)
    quat = _elementary(axes[0], angles[..., 0])
    for n, axis in enumerate(axes[1:], 1):
        e = _elementary(axis, angles[..., n])
        quat = _compose(e, quat) if extrinsic else _compose(quat, e)
    return quat


def _as_euler(quat, seq: str, degrees: bool):
    axes, extrinsic = _parse_seq(seq, "as_euler", exactly3=True)
    first, third = (0, 2) if extrinsic else (2, 0)
    i, j, k = axes if extrinsic else axes[::-1]
    symmetric = i == k
    if symmetric:
        k = 3 - i - j
    sign = (i - j) * (j - k) * (k - i) // 2
    q = [quat[..., n] for n in range(4)]
    if symmetric:
        a, b, c, d = q[3], q[i], q[j], q[k] * sign
    else:
        a, b, c, d = q[3] - q[j], q[i] + q[k] * sign, q[j] + q[3], q[k] * sign - q[i]
    middle = 2 * fnp.arctan2(fnp.hypot(c, d), fnp.hypot(a, b))
    locked_0 = fnp.abs(middle) <= _EULER_EPS
    general = ~locked_0 & ~(fnp.abs(middle - np.pi) <= _EULER_EPS)
    half_sum, half_diff = fnp.arctan2(b, a), fnp.arctan2(d, c)
    angles = [fnp.where(locked_0, 2 * half_sum, 2 * half_diff * (-1 if extrinsic else 1)), middle,
              fnp.zeros_like(middle)]
    angles[first] = fnp.where(general, half_sum - half_diff, angles[first])
    angles[third] = fnp.where(general, half_sum + half_diff, angles[third])
    if not symmetric:
        angles[third] = angles[third] * sign
        angles[1] = angles[1] - np.pi / 2
    out = fnp.remainder(fnp.stack(angles, axis=-1) + np.pi, 2 * np.pi) - np.pi
    return fnp.rad2deg(out) if degrees else out


class Rotation(typing.NamedTuple):
    """Rotations in 3 dimensions, held as unit quaternions `quat` (x, y, z, w): one (shape (4,))
    or a stack (shape (n, 4)). A pytree, as JAX's `scipy.spatial.transform.Rotation`.

    >>> r = Rotation.from_euler("z", 90, degrees=True)
    >>> r.apply(np.array([1.0, 0.0, 0.0])).round(12)
    Array([0., 1., 0.], dtype=float64)
    >>> round(float((r * r).magnitude()), 12)
    3.14159265359
    """
    quat: Array

    @classmethod
    def concatenate(cls, rotations: typing.Sequence[Rotation]) -> Rotation:
        """Concatenate a sequence of stacked `Rotation`s into one."""
        return cls(fnp.concatenate([r.quat for r in rotations]))

    @classmethod
    def from_euler(cls, seq: str, angles, degrees: bool = False) -> Rotation:
        """From Euler angles about up to 3 axes: 'xyz' lower case extrinsic (fixed axes),
        'XYZ' upper case intrinsic (rotating axes); angles (..., len(seq))."""
        return cls(_from_euler(seq, angles, degrees))

    @classmethod
    def from_matrix(cls, matrix) -> Rotation:
        """From rotation matrices (..., 3, 3)."""
        m = to_inexact(fnp.asarray(matrix))
        if m.ndim < 2 or m.shape[-2:] != (3, 3):
            raise FuncadValueError(f"from_matrix: expected matrices of shape (3, 3) or (n, 3, 3), got {m.shape}")
        return cls(_from_matrix(m))

    @classmethod
    def from_mrp(cls, mrp) -> Rotation:
        """From Modified Rodrigues Parameters (..., 3)."""
        return cls(_from_mrp(_last(to_inexact(fnp.asarray(mrp)), 3, "MRPs", "from_mrp")))

    @classmethod
    def from_quat(cls, quat) -> Rotation:
        """From quaternions (..., 4) in scalar-last order (x, y, z, w); they are normalized."""
        return cls(_normalize(_last(to_inexact(fnp.asarray(quat)), 4, "quaternions", "from_quat")))

    @classmethod
    def from_rotvec(cls, rotvec, degrees: bool = False) -> Rotation:
        """From rotation vectors (..., 3): axis times angle (radians, or degrees)."""
        return cls(_from_rotvec(_last(to_inexact(fnp.asarray(rotvec)), 3, "rotation vectors",
                                      "from_rotvec"), degrees))

    @classmethod
    def identity(cls, num: int | None = None, dtype=float) -> Rotation:
        """The identity rotation, or `num` of them stacked."""
        quat = fnp.array([0.0, 0.0, 0.0, 1.0], dtype=dtype)
        return cls(quat if num is None else fnp.tile(quat, (int(num), 1)))

    @classmethod
    def random(cls, random_key, num: int | None = None) -> Rotation:
        """Uniformly distributed rotations (JAX 0.12's raises NotImplementedError): normalized
        4-d normal draws, uniform on the unit quaternions and so in SO(3)."""
        shape = (4,) if num is None else (int(num), 4)
        return cls(_normalize(random.normal(random_key, shape)))

    def __getitem__(self, indexer) -> Rotation:
        """The rotation(s) at `indexer` of a stack."""
        if self.single:
            raise FuncadTypeError("Single rotation is not subscriptable.")
        return Rotation(self.quat[indexer])

    def __len__(self) -> int:
        """The number of rotations in a stack."""
        if self.single:
            raise FuncadTypeError("Single rotation has no len().")
        return self.quat.shape[0]

    def __mul__(self, other: Rotation) -> Rotation:
        """Composition: `(p * q).apply(v) == p.apply(q.apply(v))`."""
        if not isinstance(other, Rotation):
            return NotImplemented
        return Rotation.from_quat(_compose(self.quat, other.quat))

    def apply(self, vectors, inverse: bool = False):
        """Rotate vectors (..., 3) (by the inverse rotation if `inverse`)."""
        v = _last(fnp.asarray(vectors), 3, "vectors", "Rotation.apply")
        m = self.as_matrix()
        if inverse:
            m = fnp.swapaxes(m, -1, -2)
        return fnp.matmul(m, v[..., None])[..., 0]

    def as_euler(self, seq: str, degrees: bool = False):
        """Euler angles (..., 3) for a 3-axis sequence ('xyz' extrinsic, 'XYZ' intrinsic)."""
        return _as_euler(self.quat, seq, degrees)

    def as_matrix(self):
        """Rotation matrices (..., 3, 3)."""
        return _as_matrix(self.quat)

    def as_mrp(self):
        """Modified Rodrigues Parameters (..., 3)."""
        return _as_mrp(self.quat)

    def as_rotvec(self, degrees: bool = False):
        """Rotation vectors (..., 3): axis times angle in [0, pi] (or degrees)."""
        return _as_rotvec(self.quat, degrees)

    def as_quat(self, canonical: bool = False, scalar_first: bool = False):
        """Quaternions (..., 4), scalar last unless `scalar_first`; `canonical`: w >= 0 (ties
        broken by the first nonzero of x, y, z)."""
        quat = _make_canonical(self.quat) if canonical else self.quat
        return fnp.roll(quat, shift=1, axis=-1) if scalar_first else quat

    def inv(self) -> Rotation:
        """The inverse rotation(s)."""
        return Rotation(self.quat * fnp.array([-1, -1, -1, 1], dtype=self.quat.dtype))

    def magnitude(self):
        """The rotation angle(s) in [0, pi]."""
        return _magnitude(self.quat)

    def mean(self, weights=None) -> Rotation:
        """The (weighted) mean rotation of a stack: the top eigenvector of sum w q q^T."""
        dtype = self.quat.dtype
        w = fnp.ones(self.quat.shape[0], dtype=dtype) if weights is None else fnp.asarray(weights, dtype=dtype)
        if w.ndim != 1:
            raise FuncadValueError(f"Expected `weights` to be 1 dimensional, got shape {w.shape}.")
        if w.shape[0] != len(self):
            raise FuncadValueError(f"Expected `weights` to have number of values equal to number of "
                                   f"rotations, got {w.shape[0]} values and {len(self)} rotations.")
        k = fnp.matmul(w[None, :] * self.quat.T, self.quat)
        _, v = fnp.linalg.eigh(k)
        return Rotation(v[:, -1])

    @property
    def single(self) -> bool:
        """Whether this is one rotation (not a stack)."""
        return self.quat.ndim == 1


class Slerp(typing.NamedTuple):
    """Spherical linear interpolation between key rotations at increasing key times, as JAX's
    (a pytree; build with `Slerp.init(times, rotations)`, call with times).

    >>> s = Slerp.init([0.0, 1.0], Rotation.from_euler("z", [[0.0], [90.0]], degrees=True))
    >>> s(0.5).as_euler("zyx", degrees=True).round(9)
    Array([45.,  0.,  0.], dtype=float64)
    """
    times: Array
    timedelta: Array
    rotations: Rotation
    rotvecs: Array

    @classmethod
    def init(cls, times, rotations: Rotation) -> Slerp:
        """Interpolate between `rotations` (a stack of at least 2) at key `times` (1-d)."""
        if not isinstance(rotations, Rotation):
            raise FuncadTypeError("`rotations` must be a `Rotation` instance.")
        if rotations.single or len(rotations) == 1:
            raise FuncadValueError("`rotations` must be a sequence of at least 2 rotations.")
        times = fnp.asarray(times, dtype=rotations.quat.dtype)
        if times.ndim != 1:
            raise FuncadValueError(f"Expected times to be specified in a 1 dimensional array, got "
                                   f"{times.ndim} dimensions.")
        if times.shape[0] != len(rotations):
            raise FuncadValueError(f"Expected number of rotations to be equal to number of timestamps "
                                   f"given, got {len(rotations)} rotations and {times.shape[0]} timestamps.")
        start = Rotation(rotations.as_quat()[:-1])
        end = Rotation(rotations.as_quat()[1:])
        return cls(times=times, timedelta=fnp.diff(times), rotations=start,
                   rotvecs=(start.inv() * end).as_rotvec())

    def __call__(self, times) -> Rotation:
        """The interpolated rotation(s) at `times` (a scalar gives a single rotation)."""
        t = fnp.asarray(times, dtype=self.times.dtype)
        if t.ndim > 1:
            raise FuncadValueError(f"`times` must be at most 1-dimensional, got shape {t.shape}.")
        single = t.ndim == 0
        t = fnp.atleast_1d(t)
        ind = fnp.maximum(fnp.searchsorted(self.times, t) - 1, 0)
        alpha = (t - self.times[ind]) / self.timedelta[ind]
        result = self.rotations[ind] * Rotation.from_rotvec(self.rotvecs[ind] * alpha[:, None])
        return result[0] if single else result
