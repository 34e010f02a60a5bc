"""An imported Hugging Face Marian model of opus-mt's size beside its own ``generate``: the time to
translate one 20-word sentence, greedy and beam 5, with this project's traces (every layer's and
head's cross-attention, the beam tree) and with ``generate(output_attentions=True)``.

    python bench/hf_speed.py [--repeats 5] [--threads 1]

The model is built from opus-mt-en-de's configuration (6 + 6 layers, d_model 512, 8 heads,
58,101 tokens: about 74M parameters) with random weights, nothing downloaded. A random model
never ends its output, so both run to the same cap (``--tokens``, the length of a 20-word
sentence's translation) and do the same work. Prints the median of ``--repeats`` runs of each,
taken in turns.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SENTENCE = "the cat sat on the mat and a dog runs in the park two men play music and we eat"


def build(folder: Path, tokens: int) -> Path:
    from transformers import MarianConfig, MarianMTModel

    from tests.model import hf_fixtures as fx

    tiny = fx.marian(folder / "tokenizer-source")  # its SentencePiece files and vocabulary
    target = folder / "opus-mt-size"
    config = MarianConfig(vocab_size=58101, d_model=512, encoder_layers=6, decoder_layers=6, encoder_attention_heads=8,
                          decoder_attention_heads=8, encoder_ffn_dim=2048, decoder_ffn_dim=2048,
                          max_position_embeddings=512, pad_token_id=58100, eos_token_id=0, decoder_start_token_id=58100,
                          forced_eos_token_id=0, scale_embedding=True, share_encoder_decoder_embeddings=True)
    torch.manual_seed(0)
    model = MarianMTModel(config).eval()
    model.generation_config.max_length = tokens + 1
    model.generation_config.bad_words_ids = [[58100]]
    model.save_pretrained(str(target))
    for name in ("source.spm", "target.spm", "tokenizer_config.json"):
        (target / name).write_bytes((tiny / name).read_bytes())
    vocab = json.loads((tiny / "vocab.json").read_text())
    del vocab["<pad>"]
    vocab.update({f"▁unused{i}": i for i in range(len(vocab), 58100)}, **{"<pad>": 58100})  # opus-mt's size
    (target / "vocab.json").write_text(json.dumps(vocab))
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--tokens", type=int, default=30, help="output tokens both decode (default 30)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    from model.checkpoints.imports import import_hf
    from model.decoding.search import SearchConfig
    from model.decoding.translator import Translator

    with tempfile.TemporaryDirectory() as tmp:
        hf_dir = build(Path(tmp), args.tokens)
        translator = Translator.from_checkpoint(import_hf(hf_dir, Path(tmp) / "imported"))
        model = AutoModelForSeq2SeqLM.from_pretrained(str(hf_dir), attn_implementation="eager").eval()
        tokenizer = AutoTokenizer.from_pretrained(str(hf_dir))
        inputs = tokenizer([SENTENCE], return_tensors="pt")
        print(f"{translator.model.num_parameters():,} parameters; {len(SENTENCE.split())} words in, "
              f"{args.tokens} tokens out; {args.threads} thread(s); torch {torch.__version__}")
        for beam in (1, 5):
            ours, theirs = [], []
            for _ in range(args.repeats + 1):  # the first of each warms up
                start = time.perf_counter()
                trace = translator.translate([SENTENCE], SearchConfig(beam=beam, length_norm=1.0))[0]
                ours.append(time.perf_counter() - start)
                start = time.perf_counter()
                with torch.inference_mode():
                    out = model.generate(**inputs, num_beams=beam, output_attentions=True, return_dict_in_generate=True)
                theirs.append(time.perf_counter() - start)
            same = translator.tgt_vocab.hf_of(trace.target_ids) == out.sequences[0].tolist()[1:]
            a, b = statistics.median(ours[1:]), statistics.median(theirs[1:])
            print(f"beam {beam}: this project (traced) {a * 1000:.0f} ms, generate(output_attentions) {b * 1000:.0f} ms, "
                  f"ratio {a / b:.2f}; same tokens: {same}")


if __name__ == "__main__":
    main()
