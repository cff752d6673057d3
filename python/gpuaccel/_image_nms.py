"""``tf.image``'s greedy non-maximum suppression (non_max_suppression, _with_scores,
_overlaps): which boxes to keep, highest score first, dropping any box that overlaps
an already kept one by more than the threshold.

The selection is a data-dependent loop over a few hundred boxes whose result is a list of
indices (nothing to differentiate), so it runs on the host in NumPy, as TF's CPU kernel does,
and returns int32 tensors. TF's rules: candidates must score strictly above
``score_threshold``; equal scores go in index order; intersection over union is 0 for a box of
no area; a box is dropped when its overlap is strictly above the threshold.
"""
import numpy as np

from . import errors
from ._convert import convert_to_tensor

__all__ = ["non_max_suppression", "non_max_suppression_with_scores",
           "non_max_suppression_overlaps"]


def _host(value, name, ndim):
    array = np.asarray(value.numpy() if hasattr(value, "numpy") else value, np.float32)
    if array.ndim != ndim:
        raise errors.InvalidArgumentError(f"{name} must be {ndim}-D, got shape "
                                          f"{list(array.shape)}")
    return array


def _iou_matrix(boxes):
    """(n, n) intersection over union of (n, 4) boxes (corners in either order)."""
    low = np.minimum(boxes[:, :2], boxes[:, 2:])
    high = np.maximum(boxes[:, :2], boxes[:, 2:])
    area = np.prod(high - low, axis=1)
    inner = np.clip(np.minimum(high[:, None], high[None]) - np.maximum(low[:, None], low[None]),
                    0, None)
    intersection = inner[..., 0] * inner[..., 1]
    union = area[:, None] + area[None] - intersection
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = np.where((area[:, None] > 0) & (area[None] > 0), intersection / union, 0.0)
    return iou.astype(np.float32)


def _greedy(overlaps, scores, max_output_size, threshold, score_threshold):
    """Indices kept, in selection order."""
    if max_output_size < 0:
        raise errors.InvalidArgumentError(f"max_output_size must be non-negative, got "
                                          f"{max_output_size}")
    order = np.argsort(-scores, kind="stable")  # equal scores: lower index first
    kept = []
    for index in order:
        if len(kept) == max_output_size or not scores[index] > score_threshold:
            break
        if all(not overlaps[index, other] > threshold for other in kept):
            kept.append(int(index))
    return kept


def _checked(boxes, scores):
    box_values, score_values = _host(boxes, "boxes", 2), _host(scores, "scores", 1)
    if box_values.shape[1:] != (4,) or box_values.shape[0] != score_values.shape[0]:
        raise errors.InvalidArgumentError(
            f"boxes must be [num_boxes, 4] and scores [num_boxes], got shapes "
            f"{list(box_values.shape)} and {list(score_values.shape)}")
    return box_values, score_values


def _indices(kept):
    return convert_to_tensor(np.asarray(kept, np.int32))


def non_max_suppression(boxes, scores, max_output_size, iou_threshold=0.5,
                        score_threshold=float("-inf"), name=None):
    """``tf.image.non_max_suppression``: int32 indices of at most ``max_output_size`` boxes
    (y1, x1, y2, x2), by descending score, none overlapping a kept one by IoU above
    ``iou_threshold``."""
    box_values, score_values = _checked(boxes, scores)
    if not 0.0 <= float(iou_threshold) <= 1.0:
        raise errors.InvalidArgumentError("iou_threshold must be in [0, 1]")
    return _indices(_greedy(_iou_matrix(box_values), score_values, int(max_output_size),
                            float(iou_threshold), float(score_threshold)))


def non_max_suppression_with_scores(boxes, scores, max_output_size, iou_threshold=0.5,
                                    score_threshold=float("-inf"), soft_nms_sigma=0.0,
                                    name=None):
    """``tf.image.non_max_suppression_with_scores``: (indices, their scores); only the hard
    form (``soft_nms_sigma=0``) is written."""
    if float(soft_nms_sigma) != 0.0:
        raise NotImplementedError("non_max_suppression_with_scores(soft_nms_sigma > 0), Soft-NMS, "
                                  "is not supported yet; use soft_nms_sigma=0.0")
    selected = non_max_suppression(boxes, scores, max_output_size, iou_threshold,
                                   score_threshold)
    score_values = _host(scores, "scores", 1)
    return selected, convert_to_tensor(score_values[selected.numpy()])


def non_max_suppression_overlaps(overlaps, scores, max_output_size, overlap_threshold=0.5,
                                 score_threshold=float("-inf"), name=None):
    """``tf.image.non_max_suppression_overlaps``: the greedy selection with the given
    (n, n) ``overlaps`` in place of IoU."""
    overlap_values, score_values = _host(overlaps, "overlaps", 2), _host(scores, "scores", 1)
    if overlap_values.shape != (score_values.shape[0],) * 2:
        raise errors.InvalidArgumentError(
            f"overlaps must be [num_boxes, num_boxes] for {score_values.shape[0]} scores, got "
            f"shape {list(overlap_values.shape)}")
    return _indices(_greedy(overlap_values, score_values, int(max_output_size),
                            float(overlap_threshold), float(score_threshold)))
