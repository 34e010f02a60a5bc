"""The three tutorials' models and decoding loops as their published descriptions give them, one
sentence at a time and without any code of this project's: the reference the imports
(model/foreign/) are checked against, token for token. Written here from the tutorials' text
(layer names, shapes, equations, text handling, decoding loops), in their style: the PyTorch
tutorial's ``EncoderRNN`` / ``AttnDecoderRNN`` / ``evaluate``, bentrevett's ``Encoder`` /
``Attention`` / ``Decoder`` / ``translate_sentence``, d2l's ``Seq2SeqEncoder`` /
``Seq2SeqAttentionDecoder`` / ``predict_step``; plus teacher-forced training, as the tutorials
train, for the tiny fixtures (tests/fixtures/make_tutorial_models.py)."""
from __future__ import annotations

import re
import unicodedata

import torch
from torch import nn
from torch.nn import functional as F

# ---------------------------------------------------------------- PyTorch tutorial (fr -> en)

SOS_token, EOS_token, MAX_LENGTH = 0, 1, 10


class Lang:
    def __init__(self):
        self.word2index, self.index2word, self.n_words = {}, {0: "SOS", 1: "EOS"}, 2

    def add_sentence(self, sentence):
        for word in sentence.split(" "):
            if word not in self.word2index:
                self.word2index[word] = self.n_words
                self.index2word[self.n_words] = word
                self.n_words += 1


def normalizeString(s):
    s = "".join(c for c in unicodedata.normalize("NFD", s.lower().strip()) if unicodedata.category(c) != "Mn")
    s = re.sub(r"([.!?])", r" \1", s)
    s = re.sub(r"[^a-zA-Z!?]+", r" ", s)
    return s.strip()


class EncoderRNN(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.embedding = nn.Embedding(input_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)

    def forward(self, input):
        return self.gru(self.embedding(input))


class BahdanauAttention(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.Wa, self.Ua, self.Va = nn.Linear(hidden_size, hidden_size), nn.Linear(hidden_size, hidden_size), \
            nn.Linear(hidden_size, 1)

    def forward(self, query, keys):
        scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))
        weights = F.softmax(scores.squeeze(2).unsqueeze(1), dim=-1)
        return torch.bmm(weights, keys), weights


class AttnDecoderRNN(nn.Module):
    def __init__(self, hidden_size, output_size):
        super().__init__()
        self.embedding = nn.Embedding(output_size, hidden_size)
        self.attention = BahdanauAttention(hidden_size)
        self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, output_size)

    def forward(self, encoder_outputs, encoder_hidden, target_tensor=None, max_length=MAX_LENGTH):
        decoder_input = torch.full((encoder_outputs.size(0), 1), SOS_token, dtype=torch.long)
        decoder_hidden, outputs, attentions = encoder_hidden, [], []
        for i in range(max_length):
            output, decoder_hidden, weights = self.forward_step(decoder_input, decoder_hidden, encoder_outputs)
            outputs.append(output)
            attentions.append(weights)
            if target_tensor is not None:
                decoder_input = target_tensor[:, i].unsqueeze(1)
            else:
                decoder_input = output.topk(1)[1].squeeze(-1).detach()
        return F.log_softmax(torch.cat(outputs, dim=1), dim=-1), decoder_hidden, torch.cat(attentions, dim=1)

    def forward_step(self, input, hidden, encoder_outputs):
        embedded = self.embedding(input)
        context, weights = self.attention(hidden.permute(1, 0, 2), encoder_outputs)
        output, hidden = self.gru(torch.cat((embedded, context), dim=2), hidden)
        return self.out(output), hidden, weights


def pytorch_evaluate(encoder, decoder, sentence, input_lang, output_lang, max_length=MAX_LENGTH):
    """The tutorial's ``evaluate`` on a raw sentence (normalised first): its decoded words (with
    '<EOS>' when it ended) and the attention rows of those words, (len, src_len)."""
    with torch.no_grad():
        words = normalizeString(sentence).split(" ")
        input_tensor = torch.tensor([input_lang.word2index[w] for w in words] + [EOS_token]).view(1, -1)
        encoder_outputs, encoder_hidden = encoder(input_tensor)
        decoder_outputs, _, attentions = decoder(encoder_outputs, encoder_hidden, max_length=max_length)
        decoded = []
        for idx in decoder_outputs.topk(1)[1].squeeze(-1)[0]:
            if idx.item() == EOS_token:
                decoded.append("<EOS>")
                break
            decoded.append(output_lang.index2word[idx.item()])
    return decoded, attentions[0, :len(decoded)]


# ---------------------------------------------------------------- bentrevett notebook 3 (de -> en)


class BEncoder(nn.Module):
    def __init__(self, input_dim, embedding_dim, encoder_hidden_dim, decoder_hidden_dim):
        super().__init__()
        self.embedding = nn.Embedding(input_dim, embedding_dim)
        self.rnn = nn.GRU(embedding_dim, encoder_hidden_dim, bidirectional=True)
        self.fc = nn.Linear(encoder_hidden_dim * 2, decoder_hidden_dim)

    def forward(self, src):  # src: (src_len, batch)
        outputs, hidden = self.rnn(self.embedding(src))
        return outputs, torch.tanh(self.fc(torch.cat((hidden[-2], hidden[-1]), dim=1)))


class BAttention(nn.Module):
    def __init__(self, encoder_hidden_dim, decoder_hidden_dim):
        super().__init__()
        self.attn_fc = nn.Linear(encoder_hidden_dim * 2 + decoder_hidden_dim, decoder_hidden_dim)
        self.v_fc = nn.Linear(decoder_hidden_dim, 1, bias=False)

    def forward(self, hidden, encoder_outputs):
        src_length = encoder_outputs.shape[0]
        hidden = hidden.unsqueeze(1).repeat(1, src_length, 1)
        energy = torch.tanh(self.attn_fc(torch.cat((hidden, encoder_outputs.permute(1, 0, 2)), dim=2)))
        return torch.softmax(self.v_fc(energy).squeeze(2), dim=1)


class BDecoder(nn.Module):
    def __init__(self, output_dim, embedding_dim, encoder_hidden_dim, decoder_hidden_dim):
        super().__init__()
        self.attention = BAttention(encoder_hidden_dim, decoder_hidden_dim)
        self.embedding = nn.Embedding(output_dim, embedding_dim)
        self.rnn = nn.GRU(encoder_hidden_dim * 2 + embedding_dim, decoder_hidden_dim)
        self.fc_out = nn.Linear(encoder_hidden_dim * 2 + decoder_hidden_dim + embedding_dim, output_dim)

    def forward(self, input, hidden, encoder_outputs):
        embedded = self.embedding(input.unsqueeze(0))
        a = self.attention(hidden, encoder_outputs).unsqueeze(1)
        weighted = torch.bmm(a, encoder_outputs.permute(1, 0, 2)).permute(1, 0, 2)
        output, hidden = self.rnn(torch.cat((embedded, weighted), dim=2), hidden.unsqueeze(0))
        prediction = self.fc_out(torch.cat((output.squeeze(0), weighted.squeeze(0), embedded.squeeze(0)), dim=1))
        return prediction, hidden.squeeze(0), a.squeeze(1)


class Seq2Seq(nn.Module):
    def __init__(self, encoder, decoder):
        super().__init__()
        self.encoder, self.decoder = encoder, decoder

    def forward(self, src, trg):  # teacher forcing throughout
        encoder_outputs, hidden = self.encoder(src)
        outputs = []
        for t in range(1, trg.shape[0]):
            output, hidden, _ = self.decoder(trg[t - 1], hidden, encoder_outputs)
            outputs.append(output)
        return torch.stack(outputs)


def translate_sentence(tokens, model, de_itos, en_itos, max_output_length=25):
    """The notebook's ``translate_sentence`` on already-tokenised words: the English tokens
    (<sos> first, <eos> last when it ended) and the attention rows (len - 1, src_len)."""
    de_stoi, en_stoi = {w: i for i, w in reversed(list(enumerate(de_itos)))}, \
        {w: i for i, w in reversed(list(enumerate(en_itos)))}
    with torch.no_grad():
        de_tokens = ["<sos>"] + [t.lower() for t in tokens] + ["<eos>"]
        ids = [de_stoi.get(t, de_stoi["<unk>"]) for t in de_tokens]
        encoder_outputs, hidden = model.encoder(torch.LongTensor(ids).unsqueeze(-1))
        inputs, attentions = [en_stoi["<sos>"]], torch.zeros(max_output_length, 1, len(ids))
        for i in range(max_output_length):
            output, hidden, attention = model.decoder(torch.LongTensor([inputs[-1]]), hidden, encoder_outputs)
            attentions[i] = attention
            predicted_token = output.argmax(-1).item()
            inputs.append(predicted_token)
            if predicted_token == en_stoi["<eos>"]:
                break
    en_tokens = [en_itos[i] for i in inputs]
    return en_tokens, attentions[:len(en_tokens) - 1, 0]


# ---------------------------------------------------------------- d2l (en -> fr)


def d2l_preprocess(text):
    text = text.replace("\u202f", " ").replace("\xa0", " ")
    no_space = lambda char, prev_char: char in ",.!?" and prev_char != " "  # noqa: E731 (as the book writes it)
    return "".join([" " + char if i > 0 and no_space(char, text[i - 1]) else char for i, char in enumerate(text.lower())])


def d2l_array(sentence, idx_to_token, num_steps):
    """One source line as ``_build_arrays`` makes it: tokens + <eos>, padded or trimmed; its valid length."""
    stoi = {t: i for i, t in enumerate(idx_to_token)}
    tokens = [t for t in f"{d2l_preprocess(sentence)} <eos>".split(" ") if t]
    tokens = tokens[:num_steps] if len(tokens) > num_steps else tokens + ["<pad>"] * (num_steps - len(tokens))
    array = torch.tensor([[stoi.get(t, stoi["<unk>"]) for t in tokens]])
    return array, (array != stoi["<pad>"]).type(torch.int32).sum(1)


class D2LGRU(nn.Module):
    def __init__(self, num_inputs, num_hiddens, num_layers):
        super().__init__()
        self.rnn = nn.GRU(num_inputs, num_hiddens, num_layers)

    def forward(self, inputs, H=None):
        return self.rnn(inputs, H)


class Seq2SeqEncoder(nn.Module):
    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = D2LGRU(embed_size, num_hiddens, num_layers)

    def forward(self, X, *args):
        return self.rnn(self.embedding(X.t().type(torch.int64)))


def masked_softmax(X, valid_lens):
    shape = X.shape
    valid_lens = torch.repeat_interleave(valid_lens, shape[1])
    X = X.reshape(-1, shape[-1])
    mask = torch.arange(X.size(1), dtype=torch.float32)[None, :] < valid_lens[:, None]
    X[~mask] = -1e6
    return F.softmax(X.reshape(shape), dim=-1)


class AdditiveAttention(nn.Module):
    def __init__(self, num_hiddens):
        super().__init__()
        self.W_k = nn.LazyLinear(num_hiddens, bias=False)
        self.W_q = nn.LazyLinear(num_hiddens, bias=False)
        self.w_v = nn.LazyLinear(1, bias=False)

    def forward(self, queries, keys, values, valid_lens):
        features = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        self.attention_weights = masked_softmax(self.w_v(features).squeeze(-1), valid_lens)
        return torch.bmm(self.attention_weights, values)


class Seq2SeqAttentionDecoder(nn.Module):
    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers):
        super().__init__()
        self.attention = AdditiveAttention(num_hiddens)
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = nn.GRU(embed_size + num_hiddens, num_hiddens, num_layers)
        self.dense = nn.LazyLinear(vocab_size)

    def init_state(self, enc_outputs, enc_valid_lens):
        outputs, hidden_state = enc_outputs
        return outputs.permute(1, 0, 2), hidden_state, enc_valid_lens

    def forward(self, X, state):
        enc_outputs, hidden_state, enc_valid_lens = state
        X = self.embedding(X).permute(1, 0, 2)
        outputs, self.attention_weights = [], []
        for x in X:
            query = torch.unsqueeze(hidden_state[-1], dim=1)
            context = self.attention(query, enc_outputs, enc_outputs, enc_valid_lens)
            x = torch.cat((context, torch.unsqueeze(x, dim=1)), dim=-1)
            out, hidden_state = self.rnn(x.permute(1, 0, 2), hidden_state)
            outputs.append(out)
            self.attention_weights.append(self.attention.attention_weights)
        outputs = self.dense(torch.cat(outputs, dim=0))
        return outputs.permute(1, 0, 2), [enc_outputs, hidden_state, enc_valid_lens]


class EncoderDecoder(nn.Module):
    def __init__(self, encoder, decoder):
        super().__init__()
        self.encoder, self.decoder = encoder, decoder

    def forward(self, enc_X, dec_X, valid_lens):
        return self.decoder(dec_X, self.decoder.init_state(self.encoder(enc_X), valid_lens))[0]


def d2l_predict(model, sentence, src_itos, tgt_itos, num_steps):
    """``predict_step`` on one raw line, then the book's loop that stops at <eos>: the tokens
    (with '<eos>' when it ended) and the attention rows of those tokens, (len, num_steps)."""
    with torch.no_grad():
        src, valid_len = d2l_array(sentence, src_itos, num_steps)
        dec_state = model.decoder.init_state(model.encoder(src, valid_len), valid_len)
        outputs, attention = [torch.tensor([[tgt_itos.index("<bos>")]])], []
        for _ in range(num_steps):
            Y, dec_state = model.decoder(outputs[-1], dec_state)
            outputs.append(Y.argmax(2))
            attention.append(model.decoder.attention_weights[0][0, 0])
    tokens = []
    for p in torch.cat(outputs[1:], 1)[0].tolist():
        tokens.append(tgt_itos[p])
        if tgt_itos[p] == "<eos>":
            break
    return tokens, torch.stack(attention[:len(tokens)])
