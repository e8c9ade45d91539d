"""What an importer declares (dataset/importer.py), module by module of
``dataset/importers/``: each module's ``IMPORTER`` is the one the registry
holds under its name, and it recognizes its own sample file."""

import dataclasses

import pytest

from dataset.convert import detect_file
from dataset.importer import CHAT_OPTIONS, Importer
from dataset.importers import (
    IMPORTERS,
    aloe,
    characterbench,
    lenient,
    openai_messages,
    personachat,
    personachat_original,
    prefeval,
    sharegpt,
)
from tests.dataset.test_importers import FILES, SAMPLES

MODULES = (
    aloe,
    characterbench,
    lenient,
    openai_messages,
    personachat,
    personachat_original,
    prefeval,
    sharegpt,
)


def test_every_module_of_the_package_is_listed_here():
    assert sorted(m.IMPORTER.name for m in MODULES) == sorted(IMPORTERS.names())


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_a_module_s_importer_is_the_registry_s_and_detects_its_sample(module):
    importer = module.IMPORTER
    assert isinstance(importer, Importer)
    assert IMPORTERS[importer.name] is importer
    assert detect_file(SAMPLES / FILES[importer.name]) == importer.name
    assert importer.title and importer.id_prefix


def test_an_importer_is_frozen_with_the_chat_options_by_default():
    importer = Importer("x", lambda r, n, o: {}, lambda r: False, "x", "X")
    assert importer.options == CHAT_OPTIONS == ("profile", "personality", "method")
    assert importer.precedence == 50
    with pytest.raises(dataclasses.FrozenInstanceError):
        importer.name = "y"
