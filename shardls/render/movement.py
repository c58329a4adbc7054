"""The data-movement figure of a reshard, constraint or device_put, in one line for the hover.

Most moves bring the same amount into every device, so the line says that amount once; when only
some devices receive (or amounts differ) it says how many devices and the largest amount, which
bounds the time of the move, and the total.
"""

from __future__ import annotations

from shardls.core.movement import DataMovement
from shardls.render.units import short_bytes


def movement_text(movement: DataMovement) -> str:
    """`moves 3.0 MiB into each device`, `moves nothing`, or the uneven forms below."""
    if movement.moves_nothing:
        return "moves nothing"
    devices = len(movement.device_ids)
    receiving = movement.receiving_devices
    amounts = {
        size
        for size, elements in zip(movement.received_bytes, movement.received_elements, strict=True)
        if elements
    }
    largest = short_bytes(movement.max_bytes)
    if devices == 1:
        return f"moves {largest} into the device"
    if movement.is_uniform:
        return f"moves {largest} into each device"
    if len(amounts) == 1:
        return f"moves {largest} into each of {receiving} of the {devices} devices"
    some = "" if receiving == devices else f" ({receiving} of the {devices} devices receive)"
    return f"moves up to {largest} into a device, {short_bytes(movement.total_bytes)} in all{some}"
