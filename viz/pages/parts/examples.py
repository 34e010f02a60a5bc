"""Example sentences per source language: everyday speech, captions, long sentences, and the
reorderings that make an alignment worth looking at."""
from __future__ import annotations

from typing import Optional

from viz.i18n import N_

# source language -> [(what kind of sentence, the sentence)]: the sentences are data; the kinds are
# the app's text, kept in English here (``reordering`` reads them) and shown through _()
EXAMPLES: dict[str, list[tuple[str, str]]] = {
    "en": [
        (N_("everyday"), "I would like a cup of coffee, please."),
        (N_("everyday"), "Where is the train station?"),
        (N_("everyday"), "I am hungry."),
        (N_("everyday"), "The weather is nice today."),
        (N_("French puts the adjective after the noun"), "We bought a big black car last week."),
        (N_("French puts the adjective after the noun"), "She has a white cat and two small dogs."),
        (N_("French puts object pronouns before the verb"), "I know her, but I have never seen him."),
        (N_("French puts object pronouns before the verb"), "He gave it to me yesterday."),
        (N_("image caption"), "A man in a blue shirt is standing on a ladder cleaning windows."),
        (N_("image caption"), "Two young children are playing with a ball in the park."),
        (N_("long"), "A little girl in a pink dress is climbing the stairs of a wooden playhouse while her "
                     "father watches from a bench and a brown dog sleeps in the grass next to them."),
        (N_("long"), "When I was a child, my mother used to take me to the market every Saturday morning, and "
                     "we always bought fresh bread, cheese and fruit for the whole week."),
    ],
    "fr": [
        (N_("everyday"), "Je voudrais une tasse de café, s'il vous plaît."),
        (N_("everyday"), "Où est la gare ?"),
        (N_("everyday"), "J'ai faim."),
        (N_("English puts the adjective before the noun"), "Nous avons acheté une grosse voiture noire la semaine dernière."),
        (N_("English puts the adjective before the noun"), "Elle a un chat blanc et deux petits chiens."),
        (N_("English puts object pronouns after the verb"), "Je la connais, mais je ne l'ai jamais vu."),
        (N_("English puts object pronouns after the verb"), "Il me l'a donné hier."),
        (N_("image caption"), "Un homme en chemise bleue est debout sur une échelle et nettoie des fenêtres."),
        (N_("image caption"), "Deux jeunes enfants jouent avec un ballon dans le parc."),
        (N_("long"), "Quand j'étais enfant, ma mère m'emmenait au marché tous les samedis matin, et nous achetions "
                     "toujours du pain frais, du fromage et des fruits pour toute la semaine."),
    ],
    "de": [
        (N_("image caption"), "Ein Mann in einem blauen Hemd steht auf einer Leiter und putzt Fenster."),
        (N_("image caption"), "Zwei kleine Kinder spielen mit einem Ball im Park."),
        (N_("verb at the end of a subordinate clause"), "Ein Mann, der einen roten Hut trägt, steht vor dem Gebäude."),
        (N_("verb at the end of a subordinate clause"), "Eine Frau lächelt, während sie ihren Hund streichelt."),
        (N_("separable verb"), "Ein kleiner Junge hebt einen Ball vom Boden auf."),
        (N_("separable verb"), "Eine Frau ruft ihre Freundin an."),
        (N_("participle at the end (perfect tense)"), "Ein Hund hat einen Stock aus dem Wasser geholt."),
        (N_("participle at the end (perfect tense)"), "Die Kinder haben im Schnee mit ihrem Vater gespielt."),
        (N_("long"), "Ein junger Mann in einem blauen Hemd und eine ältere Frau mit einer Sonnenbrille sitzen auf einer "
                     "Bank, während drei kleine Kinder im Hintergrund auf dem Rasen Fußball spielen."),
    ],
}
REORDERING_KINDS = ("adjective", "pronoun", "verb", "participle")

# A reference translation of each example, written for this app (the Teacher forcing tab offers
# it): the target language's reference of each source sentence
_EN_FR = {
    "I would like a cup of coffee, please.": "Je voudrais une tasse de café, s'il vous plaît.",
    "Where is the train station?": "Où est la gare ?",
    "I am hungry.": "J'ai faim.",
    "The weather is nice today.": "Il fait beau aujourd'hui.",
    "We bought a big black car last week.": "Nous avons acheté une grosse voiture noire la semaine dernière.",
    "She has a white cat and two small dogs.": "Elle a un chat blanc et deux petits chiens.",
    "I know her, but I have never seen him.": "Je la connais, mais je ne l'ai jamais vu.",
    "He gave it to me yesterday.": "Il me l'a donné hier.",
    "A man in a blue shirt is standing on a ladder cleaning windows.":
        "Un homme en chemise bleue est debout sur une échelle et nettoie des fenêtres.",
    "Two young children are playing with a ball in the park.": "Deux jeunes enfants jouent avec un ballon dans le parc.",
    EXAMPLES["en"][10][1]: "Une petite fille en robe rose monte l'escalier d'une cabane en bois pendant que son père la "
                           "regarde depuis un banc et qu'un chien marron dort dans l'herbe à côté d'eux.",
    EXAMPLES["en"][11][1]: EXAMPLES["fr"][9][1],
}
REFERENCES: dict[tuple[str, str], dict[str, str]] = {
    ("en", "fr"): _EN_FR,
    ("fr", "en"): {fr: en for en, fr in _EN_FR.items() if fr in {s for _, s in EXAMPLES["fr"]}},
    ("de", "en"): {
        "Ein Mann in einem blauen Hemd steht auf einer Leiter und putzt Fenster.":
            "A man in a blue shirt is standing on a ladder cleaning windows.",
        "Zwei kleine Kinder spielen mit einem Ball im Park.": "Two small children are playing with a ball in the park.",
        "Ein Mann, der einen roten Hut trägt, steht vor dem Gebäude.":
            "A man who is wearing a red hat is standing in front of the building.",
        "Eine Frau lächelt, während sie ihren Hund streichelt.": "A woman smiles while she pets her dog.",
        "Ein kleiner Junge hebt einen Ball vom Boden auf.": "A little boy picks a ball up off the ground.",
        "Eine Frau ruft ihre Freundin an.": "A woman calls her friend.",
        "Ein Hund hat einen Stock aus dem Wasser geholt.": "A dog has fetched a stick out of the water.",
        "Die Kinder haben im Schnee mit ihrem Vater gespielt.": "The children played in the snow with their father.",
        EXAMPLES["de"][8][1]: "A young man in a blue shirt and an older woman with sunglasses are sitting on a bench "
                              "while three small children are playing soccer on the lawn in the background.",
    },
}


def examples(lang: str) -> list[tuple[str, str]]:
    """The examples for source language ``lang`` (none for a language without any)."""
    return EXAMPLES.get(lang, [])


def reordering(lang: str) -> list[str]:
    """The examples of ``lang`` whose word order changes in translation."""
    return [text for kind, text in examples(lang) if any(word in kind for word in REORDERING_KINDS)]


def example_reference(sentence: str, pair: str) -> Optional[str]:
    """The reference translation written for ``sentence`` when it is an example of language pair
    ``pair`` ("en-fr"), else None."""
    src, _, tgt = pair.partition("-")
    return REFERENCES.get((src, tgt), {}).get(sentence.strip())
