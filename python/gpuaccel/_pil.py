"""PIL, imported only when a function that needs it is called.

Why a module of its own: PIL is an optional dependency of gpuaccel (as of Keras), used by
``keras.utils.load_img``/``save_img`` and by the image codecs of ``tf.image``/``tf.io``
(``decode_jpeg``, ``encode_png``...). gpuaccel installs and imports without it; the first call
that needs it raises an ImportError naming the call and how to install PIL.
"""


def pil_image(caller):
    """PIL.Image, or an ImportError naming ``caller`` and how to install PIL."""
    try:
        from PIL import Image
    except ImportError as error:
        raise ImportError(f"Could not import PIL.Image. The use of `{caller}` requires PIL: "
                          "pip install pillow") from error
    return Image
