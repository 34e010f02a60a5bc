"""Tiny Hugging Face encoder-decoders built offline from configs (random weights), each saved
with ``save_pretrained`` beside a tokenizer made here: Marian with its own SentencePiece files, the
others with a word-level ``tokenizer.json``. Nothing is downloaded."""
from __future__ import annotations

import io
import json
from pathlib import Path

import torch

TEXT = ["the cat sat on the mat", "a dog runs in the park", "two men play music", "the sun is warm today",
        "she reads a long book", "children walk to school", "we eat bread and cheese", "the red car stops"]
WORDS = sorted({w for line in TEXT for w in line.split()})
# sizes all different: d_model 20, 2 encoder and 3 decoder layers, 4 heads, feed-forward 24/28
SIZES = {"d_model": 20, "encoder_layers": 2, "decoder_layers": 3, "encoder_attention_heads": 4,
         "decoder_attention_heads": 4, "encoder_ffn_dim": 24, "decoder_ffn_dim": 28, "max_position_embeddings": 64}


def _spm(lines: list[str], size: int) -> bytes:
    import sentencepiece as spm

    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=model, vocab_size=size,
                                   model_type="word", character_coverage=1.0, bos_id=-1, eos_id=-1, unk_id=0,
                                   minloglevel=2)
    return model.getvalue()


def _train_briefly(model, tokenizer, steps: int = 40) -> None:
    """A few updates on copying ``TEXT`` (reversed word order), so that outputs end at varied
    lengths instead of running to the cap as an untrained model's do. Tests check parity with
    ``generate``, never what this taught."""
    pairs = [(line, " ".join(reversed(line.split()))) for line in TEXT]
    batch = tokenizer([a for a, _ in pairs], text_target=[b for _, b in pairs], padding=True, return_tensors="pt")
    labels = batch["labels"].masked_fill(batch["labels"] == tokenizer.pad_token_id, -100)
    optimiser = torch.optim.Adam(model.parameters(), lr=0.01)
    model.train()
    for _ in range(steps):
        optimiser.zero_grad()
        model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], labels=labels).loss.backward()
        optimiser.step()
    model.eval()


def _generation(folder: Path, **settings) -> None:
    if settings:
        path = folder / "generation_config.json"
        config = json.loads(path.read_text()) if path.exists() else {}
        config.update(settings)
        path.write_text(json.dumps(config))


def marian(folder: Path, seed: int = 0, **generation) -> Path:
    """A Marian model with source.spm, target.spm and vocab.json, like an opus-mt folder."""
    from transformers import MarianConfig, MarianMTModel, MarianTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    model_bytes = _spm(TEXT, len(WORDS) + 1)
    (folder / "source.spm").write_bytes(model_bytes)
    (folder / "target.spm").write_bytes(model_bytes)
    pieces = ["</s>", "<unk>"] + ["▁" + w for w in WORDS]
    vocab = {p: i for i, p in enumerate(pieces)}
    vocab["<pad>"] = len(vocab)
    (folder / "vocab.json").write_text(json.dumps(vocab))
    tokenizer = MarianTokenizer(str(folder / "source.spm"), str(folder / "target.spm"), str(folder / "vocab.json"),
                                source_lang="en", target_lang="fr")
    tokenizer.save_pretrained(str(folder))
    pad = vocab["<pad>"]
    config = MarianConfig(vocab_size=len(vocab), pad_token_id=pad, eos_token_id=0, decoder_start_token_id=pad,
                          forced_eos_token_id=0, scale_embedding=True, **SIZES)
    torch.manual_seed(seed)
    model = MarianMTModel(config)
    _train_briefly(model, tokenizer)
    model.generation_config.bad_words_ids = [[pad]]
    model.generation_config.max_length = 24
    model.generation_config.num_beams = 4
    model.save_pretrained(str(folder))
    _generation(folder, **generation)
    return folder


def word_tokenizer(folder: Path, specials: list[str], size: int) -> None:
    """A word-level tokenizer.json whose first ids are ``specials`` (in the model's order)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors, decoders
    from transformers import PreTrainedTokenizerFast

    words = specials + [w for w in WORDS if w not in specials]
    words += [f"w{i}" for i in range(size - len(words))]
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", words.index("</s>"))])
    tok.decoder = decoders.WordPiece(prefix="##")
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>", eos_token="</s>")
    fast.save_pretrained(str(folder))
    config = json.loads((folder / "tokenizer_config.json").read_text())
    config.update(src_lang="en", tgt_lang="de")
    (folder / "tokenizer_config.json").write_text(json.dumps(config))


def other(kind: str, folder: Path, seed: int = 0, **generation) -> Path:
    """BART, mBART, T5 or M2M100, tiny, with a word-level tokenizer."""
    import transformers as tf

    folder.mkdir(parents=True, exist_ok=True)
    vocab = 48
    if kind == "t5":
        config = tf.T5Config(vocab_size=vocab, d_model=20, d_ff=28, d_kv=5, num_layers=3, num_decoder_layers=3,  # equal: generate() itself fails otherwise
                            
                             num_heads=4, pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
        specials = ["<pad>", "</s>", "<unk>"]
        cls = tf.T5ForConditionalGeneration
    else:
        configs = {"bart": (tf.BartConfig, tf.BartForConditionalGeneration),
                   "mbart": (tf.MBartConfig, tf.MBartForConditionalGeneration),
                   "m2m_100": (tf.M2M100Config, tf.M2M100ForConditionalGeneration)}
        config_cls, cls = configs[kind]
        config = config_cls(vocab_size=vocab, pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=2,
                            forced_eos_token_id=2, **SIZES)
        specials = ["<s>", "<pad>", "</s>", "<unk>"]
    word_tokenizer(folder, specials, vocab)
    torch.manual_seed(seed)
    model = cls(config)
    _train_briefly(model, tf.AutoTokenizer.from_pretrained(str(folder)))
    model.generation_config.max_length = 20
    model.save_pretrained(str(folder))
    _generation(folder, **generation)
    return folder
