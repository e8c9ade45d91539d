"""The embedded mode's broker (pipeline/worker/local_broker.py): kombu's
filesystem transport in the instance folder, a message handed over whole."""

from kombu import Connection

from pipeline.worker.local_broker import STAGING, settings


def connect(folder):
    found = settings(folder)
    return Connection(
        found["broker_url"],
        transport=found["broker_transport"],
        transport_options=found["broker_transport_options"],
    )


def test_a_message_goes_through_the_folder_and_nothing_stays_staged(tmp_path):
    with connect(tmp_path) as conn:
        queue = conn.SimpleQueue("chunks")
        queue.put({"run": "r1", "chunk": 3})
        assert not any((tmp_path / STAGING).iterdir())
        message = queue.get(timeout=10)
        message.ack()
        assert message.payload == {"run": "r1", "chunk": 3}
        queue.close()


def test_the_settings_make_their_folders_and_turn_remote_control_off(tmp_path):
    found = settings(tmp_path / "queue")
    assert (tmp_path / "queue" / STAGING).is_dir()
    assert (tmp_path / "queue" / "control").is_dir()
    assert found["worker_enable_remote_control"] is False
    assert found["broker_transport_options"]["data_folder_in"] == str(
        tmp_path / "queue"
    )
