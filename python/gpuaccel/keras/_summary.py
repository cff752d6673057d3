"""``model.summary()`` in Keras 3's layout: a boxed table of layers, output shapes and
parameter counts, then the totals with their size in bytes."""

_COLUMNS = (("Layer (type)", 33, "left"), ("Output Shape", 24, "left"), ("Param #", 15, "right"))


def _readable_bytes(count):
    size = float(count)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if size < 1024 or unit == "TB":
            return f"{size:.2f} {unit}"
        size /= 1024


def _cell(text, width, align):
    text = str(text)
    if len(text) > width - 2:
        text = text[: width - 3] + "…"
    return " " + (text.ljust(width - 2) if align == "left" else text.rjust(width - 2)) + " "


def _rule(left, fill, middle, right):
    return left + middle.join(fill * width for _, width, _ in _COLUMNS) + right


def _shape_text(shape):
    if shape is None:  # a layer not built yet
        return "?"
    if isinstance(shape, list):
        return ", ".join(_shape_text(s) for s in shape)
    return "(" + ", ".join("None" if d is None else str(d) for d in shape) + \
        ("," if len(shape) == 1 else "") + ")"


def format_summary(model_name, rows, trainable, non_trainable, bytes_per_param=4):
    """rows: (layer name, class name, output shape, params) per layer; a layer not built yet
    has None for both (Keras prints '?' and '0 (unbuilt)')."""
    lines = [f'Model: "{model_name}"']
    lines.append(_rule("┏", "━", "┳", "┓"))
    lines.append("┃" + "┃".join(_cell(t, w, a if a == "left" else "right")
                                for t, w, a in _COLUMNS) + "┃")
    lines.append(_rule("┡", "━", "╇", "┩"))
    for i, (name, cls, shape, params) in enumerate(rows):
        values = (f"{name} ({cls})", _shape_text(shape),
                  "0 (unbuilt)" if params is None else f"{params:,}")
        lines.append("│" + "│".join(_cell(v, w, a) for v, (_, w, a) in zip(values, _COLUMNS)) + "│")
        if i != len(rows) - 1:
            lines.append(_rule("├", "─", "┼", "┤"))
    lines.append(_rule("└", "─", "┴", "┘"))
    total = trainable + non_trainable
    lines.append(f" Total params: {total:,} ({_readable_bytes(total * bytes_per_param)})")
    lines.append(f" Trainable params: {trainable:,} "
                 f"({_readable_bytes(trainable * bytes_per_param)})")
    lines.append(f" Non-trainable params: {non_trainable:,} "
                 f"({_readable_bytes(non_trainable * bytes_per_param)})")
    return "\n".join(lines)
