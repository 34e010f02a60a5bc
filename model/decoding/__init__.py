"""From a trained model to translations: the decoding interface, search, traces and what explains them."""

import model.foreign.families  # noqa: F401,E402  every imported family registered: decoding opens any folder
