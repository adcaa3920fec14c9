"""Writes builtin.json, the built-in lexicons of package lexicon, from a
checkout of github.com/marcotcr/checklist (MIT licence, commit 4e6e5e3):
checklist/data/lexicons/basic.json (all of male, female, first_name,
first_pronoun, last_name, country, nationality, religion, religion_adj,
sexual_adj; the first 200 of its 1,000 cities) and checklist/data/names.json
(the first 1,000 men's, women's and last names of each list, which Perturb
uses to recognise names). Run: python3 gen_lexicons.py CHECKLIST_DIR
"""
import json
import os
import sys

root = sys.argv[1]
basic = json.load(open(os.path.join(root, "checklist/data/lexicons/basic.json")))
names = json.load(open(os.path.join(root, "checklist/data/names.json")))
out = {k: basic[k] for k in ["male", "female", "first_name", "first_pronoun", "last_name",
                             "country", "nationality", "religion", "religion_adj", "sexual_adj"]}
out["city"] = basic["city"][:200]
out["names_men"] = names["men"][:1000]
out["names_women"] = names["women"][:1000]
out["names_last"] = names["last"][:1000]
json.dump(out, open("builtin.json", "w"), indent=0, ensure_ascii=False)
