"""The image stand-in answers a shelve's image calls as Glance's v2 API
does: an image created is queued, its data uploaded (also chunked, as
glanceclient streams it) makes it active, a patch changes its
properties, a delete makes it gone (404 after), and the boot image is
always there.

Invariant: what an unshelve reads is what the shelve made, and an image
deleted is not found again.  Served over HTTP from the stand-in's
thread, as the process tier serves it.
"""

import json
import urllib.error
import urllib.request

import pytest

from faultdriver.process import image_standin
from faultdriver.process import procs
from faultdriver.process import standins


@pytest.fixture
def glance():
    images = image_standin.Images()
    stand_in = standins.StandIn('glance', images.route,
                                procs.free_port()).start()
    yield stand_in.url, images
    stand_in.stop()


def _call(url, method, body=None, content_type='application/json',
          headers=None):
    data = body if isinstance(body, bytes) or body is None else \
        json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method,
                                     headers=dict(headers or {}, **{
                                         'Content-Type': content_type}))
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            raw = response.read()
            return response.status, raw
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def test_a_shelve_snapshot_lives_and_dies_as_in_glance(glance):
    url, images = glance
    status, raw = _call(url + '/v2/images', 'POST', {
        'name': 's1-shelved', 'image_type': 'snapshot',
        'instance_uuid': 'u-1', 'status': 'active'})
    assert status == 201
    image = json.loads(raw)
    assert image['status'] == 'queued' and image['image_type'] == 'snapshot'
    one = url + '/v2/images/' + image['id']
    assert _call(one + '/file', 'GET')[0] == 204     # no data yet
    status, raw = _call(one, 'PATCH', [
        {'op': 'add', 'path': '/disk_format', 'value': 'raw'}],
        content_type=image_standin.PATCH)
    assert status == 200 and json.loads(raw)['disk_format'] == 'raw'
    assert _call(one + '/file', 'PUT', b'disk!',
                 content_type='application/octet-stream')[0] == 204
    shown = json.loads(_call(one, 'GET')[1])
    assert (shown['status'], shown['size']) == ('active', 5)
    assert _call(one + '/file', 'GET') == (200, b'disk!')
    assert set(images.created()) == {image['id']}
    assert _call(one, 'DELETE')[0] == 204
    assert _call(one, 'GET')[0] == 404
    assert _call(one, 'DELETE')[0] == 404
    assert images.created() == {}


def test_a_chunked_upload_is_read_whole(glance):
    url, _images = glance
    image = json.loads(_call(url + '/v2/images', 'POST', {'name': 'x'})[1])
    one = url + '/v2/images/' + image['id']
    # urllib sends a body chunked when the request says so.
    assert _call(one + '/file', 'PUT', b'abcde',
                 content_type='application/octet-stream',
                 headers={'Transfer-Encoding': 'chunked'})[0] == 204
    assert _call(one + '/file', 'GET') == (200, b'abcde')


def test_the_boot_image_and_bad_changes(glance):
    url, _images = glance
    boot = json.loads(_call(url + '/v2/images/' + standins.IMAGE_ID,
                            'GET')[1])
    assert boot['id'] == standins.IMAGE_ID and boot['status'] == 'active'
    assert _call(url + '/v2/images', 'POST', {'id': standins.IMAGE_ID})[0] \
        == 409
    image = json.loads(_call(url + '/v2/images', 'POST', {'name': 'x'})[1])
    one = url + '/v2/images/' + image['id']
    assert _call(one, 'PATCH', [{'op': 'replace', 'path': '/status',
                                 'value': 'active'}],
                 content_type=image_standin.PATCH)[0] == 403
    assert _call(one, 'PATCH', [], content_type='application/json')[0] == 415
