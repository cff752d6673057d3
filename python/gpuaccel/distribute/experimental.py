"""``tf.distribute.experimental``: where TF 2.x first published MultiWorkerMirroredStrategy
(the seed article still uses this spelling), and its CommunicationOptions."""
from ._communication_options import CommunicationImplementation, CommunicationOptions
from ._multi_worker import MultiWorkerMirroredStrategy

__all__ = ["MultiWorkerMirroredStrategy", "CommunicationOptions", "CommunicationImplementation"]
