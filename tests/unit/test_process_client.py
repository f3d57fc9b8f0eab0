"""The process tier's API client: an API's 500 says only "Unexpected API
Error"; the error names the service's log and quotes its last ERROR
record with the traceback, so a step that failed on a 500 (seen once in
CI: GET /os-services during a graceful stop, TypeError) says why."""

import http.server
import threading
import types

import pytest

from faultdriver.process import client

AT = '2026-12-04 14:45:16.202 16997 ERROR nova.api.openstack.wsgi '
API_LOG = '\n'.join([
    '2026-12-04 14:45:16.100 16997 INFO nova.api.openstack.requestlog [-] '
    'GET /v2.1/servers',
    AT + '[None req-1] Unexpected exception in API method: TypeError: '
    "'NoneType' object is not subscriptable",
    AT + 'Traceback (most recent call last):',
    AT + '  File "services.py", line 99, in _get_service_detail',
    AT + "TypeError: 'NoneType' object is not subscriptable",
    '2026-12-04 14:45:16.300 16997 INFO nova.api.openstack.requestlog [-] '
    'GET /v2.1/os-services 500']) + '\n'


class _Answer(http.server.BaseHTTPRequestHandler):
    status = 500

    def do_GET(self):
        body = b'{"computeFault": {"code": 500, "message": "Unexpected"}}'
        self.send_response(self.status)
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def api():
    server = http.server.HTTPServer(('127.0.0.1', 0), _Answer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield 'http://127.0.0.1:%d' % server.server_port
    server.shutdown()
    server.server_close()


def _client(url, logs):
    return client.Client(types.SimpleNamespace(
        api_url=url, placement_url=url, logs=str(logs)), timeout=10)


def test_a_500_quotes_the_api_log_traceback(api, tmp_path):
    (tmp_path / 'nova-api.log').write_text(API_LOG)
    with pytest.raises(client.APIError) as raised:
        _client(api, tmp_path).get('/os-services')
    text = str(raised.value)
    assert raised.value.status == 500
    assert text.startswith('GET /os-services -> 500: ')
    assert str(tmp_path / 'nova-api.log') + ' says:' in text
    quoted = text.split(' says:\n', 1)[1]
    # From the record's first line (not the traceback's last) to the end.
    assert quoted.startswith(AT + '[None req-1] Unexpected exception')
    assert quoted.endswith('GET /v2.1/os-services 500')


def test_a_500_without_an_error_record_says_so(api, tmp_path):
    # A DEBUG line that mentions ERROR (oslo.log's option dump) is not one.
    (tmp_path / 'placement.out').write_text(
        '2026-12-04 14:45:08.497 16997 DEBUG nova.api.openstack.wsgi_app '
        '[-] logging_exception_prefix = %(asctime)s %(process)d ERROR\n')
    with pytest.raises(client.APIError, match=r'placement.out says:\n'
                                              r'\(no ERROR record\)'):
        _client(api, tmp_path).get('/resource_providers', placement=True)
    assert client.last_error(str(tmp_path / 'missing.log')) == ''


def test_the_status_is_the_answers_not_a_number_in_the_quoted_log(
        api, tmp_path):
    """A 500 whose quoted log mentions a 404 is still a 500: callers that
    take a 404 for "the server is gone" read the status, not the text."""
    (tmp_path / 'nova-api.log').write_text(API_LOG.replace(
        'GET /v2.1/os-services 500', 'GET /v2.1/servers/x 404'))
    with pytest.raises(client.APIError) as raised:
        _client(api, tmp_path).get('/servers/x')
    assert '404' in str(raised.value)
    assert raised.value.status == 500
