"""``tf.image``'s greedy non-maximum suppression (non_max_suppression, _with_scores,
_overlaps): which boxes to keep, highest score first, dropping any box that overlaps
an already kept one by more than the threshold.

The selection is a data-dependent loop over a few hundred boxes whose result is a list of
indices (nothing to differentiate), so it runs on the host in NumPy, as TF's CPU kernel does,
and returns int32 tensors. TF's rules: candidates must score strictly above
``score_threshold``; equal scores go in index order; intersection over union is 0 for a box of
no area; a box is dropped when its overlap is strictly above the threshold.
"""
import collections

import numpy as np

from . import errors
from ._convert import convert_to_tensor

__all__ = ["non_max_suppression", "non_max_suppression_with_scores",
           "non_max_suppression_overlaps", "combined_non_max_suppression"]

# tf.image.combined_non_max_suppression's result: (batch, detections, 4) boxes, (batch,
# detections) scores and classes (float32, as TF), (batch,) int32 counts of real detections.
CombinedNonMaxSuppression = collections.namedtuple(
    "CombinedNonMaxSuppression", ["nmsed_boxes", "nmsed_scores", "nmsed_classes",
                                  "valid_detections"])


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


def combined_non_max_suppression(boxes, scores, max_output_size_per_class, max_total_size,
                                 iou_threshold=0.5, score_threshold=float("-inf"),
                                 pad_per_class=False, clip_boxes=True, name=None):
    """``tf.image.combined_non_max_suppression``: per image and per class, the greedy selection
    of at most ``max_output_size_per_class`` boxes; then the image's selections of every class
    by descending score (equal scores in class order), at most ``max_total_size`` of them
    (``pad_per_class``: at most ``max_output_size_per_class`` x classes), padded with zeros.
    ``boxes`` (batch, boxes, q, 4) with q = 1 (shared by the classes) or one per class;
    ``scores`` (batch, boxes, classes). ``clip_boxes`` clips the returned corners to [0, 1]."""
    box_values, score_values = _host(boxes, "boxes", 4), _host(scores, "scores", 3)
    batch, count, q, corners = box_values.shape
    classes = score_values.shape[2]
    if corners != 4 or score_values.shape[:2] != (batch, count) or q not in (1, classes):
        raise errors.InvalidArgumentError(
            f"boxes must be [batch, num_boxes, q, 4] with q = 1 or num_classes, and scores "
            f"[batch, num_boxes, num_classes]; got shapes {list(box_values.shape)} and "
            f"{list(score_values.shape)}")
    per_class, total = int(max_output_size_per_class), int(max_total_size)
    if per_class <= 0 or total <= 0:
        raise errors.InvalidArgumentError(
            f"max_output_size_per_class and max_total_size must be > 0, got {per_class} and "
            f"{total}")
    if not 0.0 <= float(iou_threshold) <= 1.0:
        raise errors.InvalidArgumentError("iou_threshold must be in [0, 1]")
    detections = min(total, per_class * classes) if pad_per_class else total
    out_boxes = np.zeros((batch, detections, 4), np.float32)
    out_scores = np.zeros((batch, detections), np.float32)
    out_classes = np.zeros((batch, detections), np.float32)
    valid = np.zeros(batch, np.int32)
    for image in range(batch):
        found = []  # (score, class, box)
        for label in range(classes):
            candidates = box_values[image, :, label if q > 1 else 0]
            class_scores = score_values[image, :, label]
            kept = _greedy(_iou_matrix(candidates), class_scores, per_class,
                           float(iou_threshold), float(score_threshold))
            found += [(class_scores[k], label, candidates[k]) for k in kept]
        found.sort(key=lambda item: -item[0])  # stable: equal scores keep class order
        found = found[:detections]
        valid[image] = len(found)
        for slot, (score, label, box) in enumerate(found):
            out_boxes[image, slot] = np.clip(box, 0.0, 1.0) if clip_boxes else box
            out_scores[image, slot], out_classes[image, slot] = score, label
    return CombinedNonMaxSuppression(*(convert_to_tensor(a) for a in (out_boxes, out_scores,
                                                                      out_classes, valid)))
