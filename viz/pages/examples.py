"""Example sentences per source language: everyday speech, captions, long sentences, and the
reorderings that make an alignment worth looking at."""
from __future__ import annotations

EXAMPLES: dict[str, list[tuple[str, str]]] = {  # source language -> [(what kind of sentence, the sentence)]
    "en": [
        ("everyday", "I would like a cup of coffee, please."),
        ("everyday", "Where is the train station?"),
        ("everyday", "I am hungry."),
        ("everyday", "The weather is nice today."),
        ("French puts the adjective after the noun", "We bought a big black car last week."),
        ("French puts the adjective after the noun", "She has a white cat and two small dogs."),
        ("French puts object pronouns before the verb", "I know her, but I have never seen him."),
        ("French puts object pronouns before the verb", "He gave it to me yesterday."),
        ("image caption", "A man in a blue shirt is standing on a ladder cleaning windows."),
        ("image caption", "Two young children are playing with a ball in the park."),
        ("long", "A little girl in a pink dress is climbing the stairs of a wooden playhouse while her "
                 "father watches from a bench and a brown dog sleeps in the grass next to them."),
        ("long", "When I was a child, my mother used to take me to the market every Saturday morning, and "
                 "we always bought fresh bread, cheese and fruit for the whole week."),
    ],
    "fr": [
        ("everyday", "Je voudrais une tasse de café, s'il vous plaît."),
        ("everyday", "Où est la gare ?"),
        ("everyday", "J'ai faim."),
        ("English puts the adjective before the noun", "Nous avons acheté une grosse voiture noire la semaine dernière."),
        ("English puts the adjective before the noun", "Elle a un chat blanc et deux petits chiens."),
        ("English puts object pronouns after the verb", "Je la connais, mais je ne l'ai jamais vu."),
        ("English puts object pronouns after the verb", "Il me l'a donné hier."),
        ("image caption", "Un homme en chemise bleue est debout sur une échelle et nettoie des fenêtres."),
        ("image caption", "Deux jeunes enfants jouent avec un ballon dans le parc."),
        ("long", "Quand j'étais enfant, ma mère m'emmenait au marché tous les samedis matin, et nous achetions "
                 "toujours du pain frais, du fromage et des fruits pour toute la semaine."),
    ],
    "de": [
        ("image caption", "Ein Mann in einem blauen Hemd steht auf einer Leiter und putzt Fenster."),
        ("image caption", "Zwei kleine Kinder spielen mit einem Ball im Park."),
        ("verb at the end of a subordinate clause", "Ein Mann, der einen roten Hut trägt, steht vor dem Gebäude."),
        ("verb at the end of a subordinate clause", "Eine Frau lächelt, während sie ihren Hund streichelt."),
        ("separable verb", "Ein kleiner Junge hebt einen Ball vom Boden auf."),
        ("separable verb", "Eine Frau ruft ihre Freundin an."),
        ("participle at the end (perfect tense)", "Ein Hund hat einen Stock aus dem Wasser geholt."),
        ("participle at the end (perfect tense)", "Die Kinder haben im Schnee mit ihrem Vater gespielt."),
        ("long", "Ein junger Mann in einem blauen Hemd und eine ältere Frau mit einer Sonnenbrille sitzen auf einer "
                 "Bank, während drei kleine Kinder im Hintergrund auf dem Rasen Fußball spielen."),
    ],
}
REORDERING_KINDS = ("adjective", "pronoun", "verb", "participle")


def examples(lang: str) -> list[tuple[str, str]]:
    """The examples for source language ``lang`` (none for a language without any)."""
    return EXAMPLES.get(lang, [])


def reordering(lang: str) -> list[str]:
    """The examples of ``lang`` whose word order changes in translation."""
    return [text for kind, text in examples(lang) if any(word in kind for word in REORDERING_KINDS)]
