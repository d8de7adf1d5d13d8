"""Tools over compiled languages: `extract` (the matches inside a free text) and `difference`
(whether one language holds another, with a shortest witness when it does not)."""
