"""``keras.utils``' interactive-logging switch, ``Config`` and ``model_to_dot`` against Keras 3:
the same calls on both give the same answers (values, reprs, error types and messages). The
tests that turn interactive logging off turn it back on in ``finally`` for both frameworks."""
import logging

import numpy as np
import pytest

import gpuaccel.keras as gk

keras = pytest.importorskip("keras")


def _outcome(action):
    try:
        return ("value", action())
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return ("error", type(e).__name__, str(e))


# ---- interactive logging ---------------------------------------------------------------------

@pytest.fixture
def interactive_logging_restored():
    yield
    keras.utils.enable_interactive_logging()
    gk.utils.enable_interactive_logging()


@pytest.mark.usefixtures("interactive_logging_restored")
@pytest.mark.parametrize("framework", [keras, gk], ids=["keras", "gpuaccel"])
def test_switch_reroutes_the_progress_bar_and_clear_session_resets_it(framework, capsys):
    utils = framework.utils
    states = [utils.is_interactive_logging_enabled()]
    utils.disable_interactive_logging()
    states.append(utils.is_interactive_logging_enabled())
    utils.Progbar(2, verbose=1).update(2)
    silent = capsys.readouterr().out
    utils.enable_interactive_logging()
    states.append(utils.is_interactive_logging_enabled())
    utils.Progbar(2, verbose=1).update(2)
    shown = capsys.readouterr().out
    utils.disable_interactive_logging()
    utils.clear_session()
    states.append(utils.is_interactive_logging_enabled())
    assert states == [True, False, True, True]
    assert silent == "" and "2/2" in shown


@pytest.mark.usefixtures("interactive_logging_restored")
def test_disabled_logging_sends_fit_and_summary_to_the_logger(capsys, caplog):
    model = gk.Sequential([gk.Input((3,)), gk.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    x = np.zeros((4, 3), np.float32)
    y = np.zeros((4, 1), np.float32)
    gk.utils.disable_interactive_logging()
    with caplog.at_level(logging.INFO, logger="gpuaccel"):
        model.fit(x, y, epochs=2, batch_size=2, verbose=1)
        model.summary()
    assert capsys.readouterr().out == ""
    logged = "\n".join(r.getMessage() for r in caplog.records if r.name == "gpuaccel")
    assert "Epoch 2/2" in logged and "2/2" in logged and "Total params" in logged
    gk.utils.enable_interactive_logging()
    model.fit(x, y, epochs=2, batch_size=2, verbose=1)
    assert "Epoch 2/2" in capsys.readouterr().out


# ---- Config ----------------------------------------------------------------------------------

def _config_session(Config):
    """The same uses of ``Config`` on either framework; what each step gives."""
    config = Config(learning_rate=0.1, epochs=3)
    steps = [_outcome(lambda: config.learning_rate)]
    config.batch_size = 32
    config["optimizer"] = "adam"
    steps += [_outcome(lambda: (list(config), len(config), "epochs" in config,
                                sorted(config.keys()), config.get("missing", 7),
                                config.as_dict(), config.to_json(), repr(config),
                                config.frozen))]
    steps.append(_outcome(lambda: config.learning_rat))
    steps.append(_outcome(lambda: config.nothing_like_it))
    config.freeze()
    steps.append(_outcome(lambda: setattr(config, "epochs", 4)))
    steps.append(_outcome(lambda: config.update(epochs=4)))
    steps.append(_outcome(lambda: config.pop("epochs")))
    steps.append(_outcome(lambda: config.__delitem__("epochs")))
    steps.append(_outcome(lambda: (config.frozen, config.epochs)))
    config.unfreeze()
    config.update(epochs=5)
    del config["optimizer"]
    steps.append(_outcome(lambda: (config.pop("batch_size"), config.as_dict(), config.frozen)))
    return steps


def test_config_behaves_as_keras():
    ours, theirs = _config_session(gk.utils.Config), _config_session(keras.utils.Config)
    assert ours == theirs
    assert theirs[2][0] == "error" and "Did you mean 'learning_rate'" in theirs[2][2]


# ---- model_to_dot ----------------------------------------------------------------------------

def test_model_to_dot_refuses_as_keras_or_draws_the_layers():
    ours = gk.Sequential([gk.Input((3,)), gk.layers.Dense(2, name="d1"),
                          gk.layers.Dense(1, name="d2")])
    theirs = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2), keras.layers.Dense(1)])
    unbuilt = (_outcome(lambda: gk.utils.model_to_dot(gk.Sequential([gk.layers.Dense(1)]))),
               _outcome(lambda: keras.utils.model_to_dot(
                   keras.Sequential([keras.layers.Dense(1)]))))
    assert unbuilt[0] == unbuilt[1] and unbuilt[0][1] == "ValueError"
    try:
        import pydot  # noqa: F401
    except ImportError:
        refused = (_outcome(lambda: gk.utils.model_to_dot(ours)),
                   _outcome(lambda: keras.utils.model_to_dot(theirs)))
        assert refused[0] == refused[1]
        assert refused[0][:2] == ("error", "ImportError") and "pip install pydot" in refused[0][2]
        return
    dot = gk.utils.model_to_dot(ours)
    assert [n.get_name() for n in dot.get_nodes()] == ["d1", "d2"]
    assert len(dot.get_edges()) == 1
