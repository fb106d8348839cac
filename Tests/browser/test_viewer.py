"""The web viewer in headless Chromium against the real `tessera serve`: what it draws is compared pixel by pixel
with the source at the same view, at fractional zooms and device pixel ratios 1 and 1.5, with no seams; its
tiling math agrees with the engine's shared vectors; its cache stays within budget over 500 random views; panning
fast aborts requests; the URL hash, the overview map, the keys and the buttons work. Times to first paint and to
full sharpness are printed (run with -s to see them; BENCHMARKS.md has them)."""
import json
import statistics

import numpy as np
import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.actions.action_builder import ActionBuilder
from selenium.webdriver.common.by import By

from conftest import (HEIGHT, ROOT, WIDTH, canvas_pixels, debug, expected_pixels, make_driver, open_viewer, set_view,
                      wait_for, wait_sharp)


def viewer_url(server, query=""):
    return f"{server.base}/view/waves.tif{query}"


def check_pixels(state, pixels, label):
    """The canvas matches the source at the view: small mean error inside the image, the background outside, and
    no row or column of device pixels much worse than the rest (a seam between tiles would be one)."""
    expected, inside, interior = expected_pixels(state, pixels.shape)
    error = np.abs(pixels.astype(np.float64) - expected).max(axis=-1)
    assert interior.any(), label
    mean = error[interior].mean()
    assert mean < 4, f"{label}: mean error {mean:.2f} inside the image"
    assert np.percentile(error[interior], 99.9) < 24, f"{label}: some pixels are far off"
    outside = ~inside
    if outside.any():
        assert error[outside].max() <= 2, f"{label}: the background is not plain outside the image"
    masked = np.where(interior, error, np.nan)
    rows, columns = interior.any(axis=1), interior.any(axis=0)
    worst_row = np.nanmax(np.nanmean(masked[rows], axis=1))
    worst_column = np.nanmax(np.nanmean(masked[:, columns], axis=0))
    assert worst_row < mean + 6 and worst_column < mean + 6, \
        f"{label}: a seam (worst row {worst_row:.1f}, worst column {worst_column:.1f}, mean {mean:.1f})"


VIEWS = [  # (x, y, zoom): the fitted view, fractional zooms, 1:1, and the maximum (2) near a corner
    (2000, 1500, None), (1234.5, 987.25, 0.37), (3003.3, 1999.9, 1.5), (517, 381, 1.0), (3900, 2950, 2.0),
    (2000, 1500, 0.61),
]


@pytest.mark.parametrize("ratio", [1, 1.5])
def test_views_match_the_source_without_seams(server, browser, browser15, ratio):
    driver = browser if ratio == 1 else browser15
    state = open_viewer(driver, viewer_url(server))
    assert state["pixelRatio"] == ratio
    for x, y, zoom in VIEWS:
        set_view(driver, x, y, zoom if zoom is not None else state["zoomLimits"]["minimum"])
        state = wait_sharp(driver)
        check_pixels(state, canvas_pixels(driver), f"ratio {ratio}, view {x},{y} at zoom {zoom}")


def test_deep_zoom_source_matches_the_source(server, browser, deepzoom_base):
    open_viewer(browser, f"{server.base}/view?src={deepzoom_base}/waves.dzi")
    for x, y, zoom in [(2000, 1500, 0.37), (1017, 2222, 1.5), (3999, 10, 1.0)]:
        set_view(browser, x, y, zoom)
        check_pixels(wait_sharp(browser), canvas_pixels(browser), f"dzi view {x},{y} at zoom {zoom}")


def test_zoom_limits_are_the_engines(server, browser):
    state = open_viewer(browser, viewer_url(server))
    view = browser.execute_script("const v = window.tessera.viewer.viewport.viewSize; return [v.width, v.height]")
    fit = min(view[0] / WIDTH, view[1] / HEIGHT)
    image_scale = view[0] / WIDTH
    maximum = 2 ** (int(np.ceil(np.log2(1 / image_scale))) + 1) * image_scale
    assert state["zoomLimits"] == {"minimum": fit, "maximum": maximum}
    set_view(browser, 100, 100, 50)
    assert debug(browser)["zoom"] == maximum


def test_tiling_module_reproduces_the_shared_vectors(server, browser):
    vectors = json.loads((ROOT / "Tests/Vectors/tiling.json").read_text())
    open_viewer(browser, viewer_url(server))
    results = browser.execute_async_script("""
        const [cases, done] = arguments;
        import('/web/js/tiling.js').then(({TiledLayerConfiguration, TiledLayout}) => done(cases.map((c) => {
          const configuration = new TiledLayerConfiguration(c.configuration);
          const plan = new TiledLayout(configuration, c.contentSize).plan(c.visibleRect, c.zoomScale);
          const range = configuration.levelRange(c.contentSize);
          const cells = (tiles) => tiles.map((t) => [t.column, t.row]);
          return {level: plan.level ? plan.level.level : null,
                  levelIndex: plan.level && range ? plan.level.level - range[0] : null,
                  pixelsPerPoint: plan.level ? plan.level.pixelsPerPoint : null,
                  levelRange: range, visible: cells(plan.visible), prefetch: cells(plan.prefetch)};
        })));
    """, vectors["cases"])
    assert len(results) == len(vectors["cases"]) >= 19
    for case, result in zip(vectors["cases"], results):
        assert result == case["expected"], case["name"]


def test_iiif_module_reproduces_the_shared_vectors(server, browser):
    vectors = json.loads((ROOT / "Tests/Vectors/iiif.json").read_text())
    open_viewer(browser, viewer_url(server))
    results = browser.execute_async_script("""
        const [vectors, done] = arguments;
        import('/web/js/iiif.js').then(({DEFAULT_TILE_SIZE, IIIFTileGeometry}) => done({
          defaultTileSize: DEFAULT_TILE_SIZE,
          tiles: vectors.tiles.map((v) => {
            const geometry = new IIIFTileGeometry(v.image[0], v.image[1], v.tile[0], v.tile[1]);
            const rect = geometry.tileRect(v.scale, v.column, v.row);
            return [[rect.x, rect.y, rect.width, rect.height], geometry.tilePath(v.scale, v.column, v.row)];
          }),
          rects: vectors.rects.map((v) => {
            const [x, y, width, height] = v.levelRect;
            return new IIIFTileGeometry(v.image[0], v.image[1], 256, 256).path(v.scale, {x, y, width, height});
          })}));
    """, vectors)
    assert results["defaultTileSize"] == vectors["defaultTileSize"]
    assert results["tiles"] == [[v["levelRect"], v["path"]] for v in vectors["tiles"]]
    assert results["rects"] == [v["path"] for v in vectors["rects"]]


def test_cache_stays_within_budget_over_500_random_views(server, browser):
    open_viewer(browser, viewer_url(server, "?cache=8"))
    wait_sharp(browser)
    samples = browser.execute_async_script("""
        const done = arguments[0];
        const viewer = window.tessera.viewer;
        let seed = 7;
        const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
        const frame = () => new Promise((resolve) => requestAnimationFrame(resolve));
        const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
        (async () => {
          const {minimum, maximum} = viewer.zoomLimits;
          let worst = 0, worstHeld = 0;
          const sample = () => {
            const d = viewer.debug();
            worst = Math.max(worst, d.cacheBytes + d.reservedBytes);
            worstHeld = Math.max(worstHeld, d.cacheBytes);
          };
          for (let step = 0; step < 500; step += 1) {
            if (random() < 0.5) {
              const zoom = Math.exp(Math.log(minimum) + random() * (Math.log(maximum) - Math.log(minimum)));
              viewer.setView({x: random() * viewer.contentSize.width, y: random() * viewer.contentSize.height, zoom},
                             {animate: false});
            } else {
              viewer.panBy({x: (random() - 0.5) * 600, y: (random() - 0.5) * 400});
            }
            sample();
            await frame();
            sample();
            if (step % 4 === 0) { await pause(40); sample(); }
          }
          const d = viewer.debug();
          done({worst, worstHeld, budget: d.cacheBudget, peak: d.peakCacheBytes, evictions: d.evictions,
                completed: d.completed});
        })();
    """)
    print(f"\ncache over 500 random views: budget {samples['budget']} B, most held {samples['worstHeld']} B, "
          f"held + reserved {samples['worst']} B, {samples['evictions']} evictions, {samples['completed']} tiles")
    assert samples["budget"] == 8 << 20
    assert samples["worst"] <= samples["budget"]
    assert samples["peak"] <= samples["budget"]
    assert samples["evictions"] > 0 and samples["completed"] > 100


def slow_network(driver, latency_ms):
    """Every request from `driver` takes at least `latency_ms` (0 restores the real network), so a test of what
    happens to requests in flight does not depend on how fast the loopback server answers. The browser's cache is
    off meanwhile: tiles are cacheable for a day, and those an earlier test fetched would otherwise arrive from it
    at once, never in flight."""
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": latency_ms > 0})
    driver.execute_cdp_cmd("Network.emulateNetworkConditions", {
        "offline": False, "latency": latency_ms, "downloadThroughput": -1, "uploadThroughput": -1})


def test_panning_fast_aborts_requests_for_tiles_that_left(server, browser):
    open_viewer(browser, viewer_url(server))
    wait_sharp(browser)
    before = debug(browser)
    served_before = server.tile_responses()
    slow_network(browser, 150)
    try:
        pan_fast(browser)
        after = wait_sharp(browser)
    finally:
        slow_network(browser, 0)
    requested, aborted = after["requested"] - before["requested"], after["aborted"] - before["aborted"]
    completed = after["completed"] - before["completed"]
    print(f"\nfast pan: {requested} tiles requested, {aborted} aborted, {completed} completed")
    assert aborted > 0
    assert completed < requested
    assert completed + aborted + after["failed"] - before["failed"] == requested
    wait_for(browser, "return true", timeout=1)
    assert server.tile_responses() - served_before <= requested


def pan_fast(browser):
    """Sixty pans of a few hundred pixels, one per animation frame, at zoom 2."""
    browser.execute_async_script("""
        const done = arguments[0];
        const viewer = window.tessera.viewer;
        const frame = () => new Promise((resolve) => requestAnimationFrame(resolve));
        (async () => {
          viewer.setView({x: 200, y: 200, zoom: 2}, {animate: false});
          for (let step = 0; step < 60; step += 1) {
            viewer.panBy({x: 180, y: step % 2 ? 120 : -60});
            await frame();
          }
          done();
        })();
    """)


def test_url_hash_round_trip(server, browser):
    open_viewer(browser, viewer_url(server))
    set_view(browser, 1234.5, 987.6, 0.8125)
    url = wait_for(browser, "return location.hash.includes('zoom=0.8125') && location.href")
    assert url.endswith("#x=1234.5&y=987.6&zoom=0.8125")
    state = open_viewer(browser, url)
    assert state["view"]["x"] == pytest.approx(1234.5, abs=0.01)
    assert state["view"]["y"] == pytest.approx(987.6, abs=0.01)
    assert state["zoom"] == 0.8125
    browser.execute_script("location.hash = '#x=3000&y=2000&zoom=1.5'")
    wait_for(browser, "return window.tessera.viewer.debug().zoom === 1.5")
    assert debug(browser)["view"]["x"] == pytest.approx(3000, abs=0.01)


def test_overview_map_shows_the_view_and_moves_it(server, browser):
    open_viewer(browser, viewer_url(server))
    set_view(browser, 2000, 1500, 1)
    overview = browser.find_element(By.CSS_SELECTOR, ".tessera-overview")
    box = browser.find_element(By.CSS_SELECTOR, ".tessera-overview-view")
    scale = overview.size["width"] / WIDTH
    view_width = browser.execute_script("return window.tessera.viewer.viewport.viewSize.width")
    assert box.rect["width"] == pytest.approx(scale * view_width, abs=2)
    ActionChains(browser).move_to_element_with_offset(overview, round(-0.2 * overview.size["width"]),
                                                      round(0.1 * overview.size["height"])).click().perform()
    state = debug(browser)
    assert state["view"]["x"] == pytest.approx(0.3 * WIDTH, abs=2 / scale)
    assert state["view"]["y"] == pytest.approx(0.6 * HEIGHT, abs=2 / scale)
    centre_x = box.rect["x"] + box.rect["width"] / 2 - overview.rect["x"]
    assert centre_x / scale == pytest.approx(state["view"]["x"], abs=3 / scale)


def test_keys_and_buttons_pan_and_zoom(server, browser):
    state = open_viewer(browser, viewer_url(server))
    minimum = state["zoomLimits"]["minimum"]
    viewer = browser.find_element(By.CSS_SELECTOR, ".tessera-viewer")
    settle = "const d = window.tessera.viewer.debug(); return !d.animating && d"
    viewer.send_keys("+")
    assert wait_for(browser, settle)["zoom"] == pytest.approx(2 * minimum)
    x = debug(browser)["view"]["x"]
    viewer.send_keys("\ue014")  # arrow right
    state = wait_for(browser, settle)
    assert state["view"]["x"] == pytest.approx(x + 90 / state["zoom"], rel=0.02)
    viewer.send_keys("0")
    assert wait_for(browser, settle)["zoom"] == pytest.approx(minimum)
    browser.find_element(By.CSS_SELECTOR, "button[data-action=zoom-in]").click()
    browser.find_element(By.CSS_SELECTOR, "button[data-action=zoom-in]").click()
    assert wait_for(browser, settle)["zoom"] == pytest.approx(4 * minimum)
    readout = browser.find_element(By.CSS_SELECTOR, ".tessera-zoom").text
    assert readout == f"{round(400 * minimum)}%"
    browser.find_element(By.CSS_SELECTOR, "button[data-action=zoom-out]").click()
    assert wait_for(browser, settle)["zoom"] == pytest.approx(2 * minimum)
    browser.find_element(By.CSS_SELECTOR, "button[data-action=home]").click()
    assert wait_for(browser, settle)["zoom"] == pytest.approx(minimum)


def test_drag_and_wheel(server, browser):
    open_viewer(browser, viewer_url(server))
    set_view(browser, 2000, 1500, 1)
    canvas = browser.find_element(By.CSS_SELECTOR, "canvas")
    ActionChains(browser).move_to_element(canvas).click_and_hold().move_by_offset(-100, -50).release().perform()
    state = debug(browser)
    assert state["view"]["x"] == pytest.approx(2100, abs=1) and state["view"]["y"] == pytest.approx(1550, abs=1)
    before = state["offset"]
    browser.execute_script("""
        const canvas = window.tessera.viewer.canvas, box = canvas.getBoundingClientRect();
        canvas.dispatchEvent(new WheelEvent('wheel', {deltaY: -100, clientX: box.left + 100, clientY: box.top + 100,
                                                      bubbles: true, cancelable: true}));
    """)
    state = wait_for(browser, "const d = window.tessera.viewer.debug(); return !d.animating && d")
    assert state["zoom"] == pytest.approx(2)
    # One notch doubled the zoom and the content under the cursor stayed under it.
    under_cursor = ((state["offset"]["x"] + 100) / 2, (state["offset"]["y"] + 100) / 2)
    assert under_cursor == pytest.approx((before["x"] + 100, before["y"] + 100), abs=0.01)


def test_times_to_first_paint_and_full_sharpness(server):
    """Cold loads (a new browser profile each time, so nothing is cached) at the fitted view, then a deep zoom to
    a new place; prints the medians of three runs."""
    first_paint, sharp, deep, info = [], [], [], []
    for run in range(3):
        driver = make_driver(1)
        try:
            open_viewer(driver, viewer_url(server))
            state = wait_sharp(driver)
            info.append(driver.execute_script(
                "return performance.getEntriesByType('resource').find((e) => e.name.endsWith('/info.json')).responseEnd"))
            first_paint.append(state["firstPaintMs"])
            sharp.append(state["fullySharpMs"])
            set_view(driver, 500 + 1000 * run, 700 + 600 * run, 2)
            deep.append(wait_sharp(driver)["fullySharpMs"])
        finally:
            driver.quit()
    print(f"\nviewer times (ms, median of 3 cold loads): info.json received {statistics.median(info):.0f}, "
          f"first paint {statistics.median(first_paint):.0f}, fully sharp {statistics.median(sharp):.0f}, "
          f"after a deep zoom fully sharp {statistics.median(deep):.0f}")
    assert all(value is not None and value > 0 for value in first_paint + sharp + deep)


def test_pinch_zooms_about_its_centre_and_double_tap_zooms_in(server, browser):
    open_viewer(browser, viewer_url(server))
    set_view(browser, 2000, 1500, 0.5)
    before = debug(browser)
    box = browser.execute_script("const r = window.tessera.viewer.canvas.getBoundingClientRect(); return [r.left, r.top]")
    builder = ActionBuilder(browser)
    first, second = builder.add_pointer_input("touch", "first"), builder.add_pointer_input("touch", "second")
    first.create_pointer_move(x=box[0] + 300, y=box[1] + 300)
    second.create_pointer_move(x=box[0] + 500, y=box[1] + 300)
    first.create_pointer_down(button=0)
    second.create_pointer_down(button=0)
    first.create_pause(0.3)
    second.create_pointer_move(duration=300, x=box[0] + 700, y=box[1] + 300)
    first.create_pointer_up(0)
    second.create_pointer_up(0)
    builder.perform()
    after = debug(browser)
    # Two fingers 200 pixels apart moved to 400: twice the zoom, and what was under their centre (400, 300) follows
    # it to (500, 300).
    assert after["zoom"] == pytest.approx(2 * before["zoom"])
    was = ((before["offset"]["x"] + 400) / before["zoom"], (before["offset"]["y"] + 300) / before["zoom"])
    now = ((after["offset"]["x"] + 500) / after["zoom"], (after["offset"]["y"] + 300) / after["zoom"])
    assert now == pytest.approx(was, abs=0.5)

    builder = ActionBuilder(browser)
    finger = builder.add_pointer_input("touch", "finger")
    for _ in range(2):
        finger.create_pointer_move(duration=0, x=box[0] + 200, y=box[1] + 200)
        finger.create_pointer_down(button=0)
        finger.create_pointer_up(0)
        finger.create_pause(0.05)
    builder.perform()
    tapped = wait_for(browser, "const d = window.tessera.viewer.debug(); return !d.animating && d.zoom > 1.5 && d")
    assert tapped["zoom"] == pytest.approx(2 * after["zoom"])
    assert ((tapped["offset"]["x"] + 200) / tapped["zoom"]) == pytest.approx(
        (after["offset"]["x"] + 200) / after["zoom"], abs=0.5)


def test_cache_evicts_least_recently_used_first_and_never_what_is_pinned(server, browser):
    open_viewer(browser, viewer_url(server))
    result = browser.execute_async_script("""
        const done = arguments[0];
        import('/web/js/cache.js').then(({TileCache}) => {
          const closed = [];
          const tile = (name) => ({bitmap: {close: () => closed.push(name)}});
          const cache = new TileCache(300);
          for (const key of ['a', 'b', 'c']) cache.insert(key, tile(key), 100, 0);
          cache.tile('a');                         // a is now the most recently used
          cache.setPinned(new Set(['b']));         // b is drawn: never evicted
          cache.insert('d', tile('d'), 100, 0);    // over budget: c goes (a was used, b is pinned)
          const afterD = [...cache.tiles.keys()];
          const reserved = cache.reserve(100);     // makes room for a tile in flight: a goes
          const refused = cache.reserve(200);      // only b (pinned) and d are left: d would have to go and
                                                   // then b, which cannot, so nothing is reserved
          done({afterD, afterReserve: [...cache.tiles.keys()], reserved, refused, closed,
                bytes: cache.statistics.bytes, reservedBytes: cache.statistics.reservedBytes});
        });
    """)
    assert result["afterD"] == ["b", "a", "d"]
    assert result["reserved"] is True and result["afterReserve"] == ["b", "d"]
    assert result["refused"] is False
    assert result["closed"][:2] == ["c", "a"]
    assert result["bytes"] + result["reservedBytes"] <= 300
