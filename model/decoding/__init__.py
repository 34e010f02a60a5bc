"""From a trained model to translations: the decoding interface, search, traces and what explains them."""
