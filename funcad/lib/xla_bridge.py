"""The backends funcad runs on (JAX's `lib.xla_bridge`)."""
from ..lowering.devices import (default_backend, device_count, devices, local_device_count, local_devices,
                               process_count, process_index)
from ..extend.backend import backends, get_backend

__all__ = ["backends", "default_backend", "device_count", "devices", "get_backend",
           "local_device_count", "local_devices", "process_count", "process_index"]
