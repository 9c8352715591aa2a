# Santa Ana Mountains-like study area (NAD83 / UTM 11N, EPSG:26911, 30 m): elevation, NLCD land
# cover, protected status, roads and mountain lion habitat cores; and the derived layers of T22.
ML_SHAPE = (240, 300)
ML_TRANSFORM = from_origin(430_000, 3_740_000, 30, 30)
NLCD_TO_COST = {11: 10, 21: 8, 22: 7, 23: 8, 24: 9, 31: 6, 41: 2, 42: 1, 43: 2, 52: 3, 71: 3, 72: 3,
                81: 4, 82: 6, 90: 4, 95: 4, 255: 10}
PROTECTED_TO_COST = {0: 1, 1: 3, 2: 6, 3: 9, 4: 10, 255: 10}

def ml_layers():
    r = rng()
    rows, cols = np.indices(ML_SHAPE)
    ridge = blob(ML_SHAPE, (120, 150), 70)
    elev = 200 + 1400 * ridge + 250 * smooth_field(ML_SHAPE, r, 6) + 80 * smooth_field(ML_SHAPE, rng(1), 2)
    wild = ridge + 0.3 * smooth_field(ML_SHAPE, rng(2), 10)
    lc = np.select([wild > 0.9, wild > 0.7, wild > 0.5, wild > 0.35, wild > 0.25, wild > 0.15],
                   [42, 41, 52, 71, 81, 22], 24).astype("uint8")
    lc[smooth_field(ML_SHAPE, rng(3), 8) > 0.93] = 11
    lc[(wild < 0.2) & (smooth_field(ML_SHAPE, rng(4), 5) > 0.7)] = 82
    prot = np.select([wild > 0.85, wild > 0.65, wild > 0.45, wild > 0.3], [4, 3, 2, 1], 0).astype("uint8")
    prot[:5, :] = 255
    xs = ML_TRANSFORM.c + 15 + 30 * np.arange(ML_SHAPE[1]); ys = ML_TRANSFORM.f - 15 - 30 * np.arange(ML_SHAPE[0])
    roads = [LineString([(xs[0], ys[200]), (xs[-1], ys[170])]), LineString([(xs[40], ys[0]), (xs[90], ys[-1])]),
             wiggly_line((xs[0], ys[60]), (xs[-1], ys[30]), rng(5), 12, 0.05)]
    habitat = [Point(xs[60], ys[110]).buffer(900), Point(xs[240], ys[90]).buffer(1100), Point(xs[170], ys[210]).buffer(800)]
    return elev.astype("float32"), lc, prot, roads, habitat, xs, ys

def write_ml_raw():
    elev, lc, prot, roads, habitat, xs, ys = ml_layers()
    write_raster("data/Elevation.tif", elev, ML_TRANSFORM, "EPSG:26911", nodata=-9999.0)
    write_raster("data/landCover.tif", lc, ML_TRANSFORM, "EPSG:26911", nodata=255)
    write_raster("data/Protected_Status.tif", prot, ML_TRANSFORM, "EPSG:26911", nodata=255)
    gpd.GeoDataFrame({"name": ["SR-74", "I-15", "Ortega Hwy"], "lanes": [2, 6, 2]}, geometry=roads, crs=26911).to_file("data/Roads.geojson", driver="GeoJSON")
    gpd.GeoDataFrame({"habitat_id": [1, 2, 3], "name": ["Santa Ana North", "Palomar", "Laguna"]}, geometry=habitat, crs=26911).to_file("data/habitat.geojson", driver="GeoJSON")

def write_ml_derived():
    from scipy.ndimage import distance_transform_edt, generic_filter
    from rasterio.features import rasterize
    elev, lc, prot, roads, habitat, xs, ys = ml_layers()
    lcr = np.vectorize(NLCD_TO_COST.get)(lc).astype("float32")
    prr = np.vectorize(PROTECTED_TO_COST.get)(prot).astype("float32")
    on_road = rasterize(roads, out_shape=ML_SHAPE, transform=ML_TRANSFORM)
    dist = (distance_transform_edt(on_road == 0) * 30).astype("float32")
    tri = generic_filter(elev, lambda w: np.sqrt(np.mean((w - w[4]) ** 2)), size=3, mode="nearest").astype("float32")
    write_raster("data/landCover_reclassified.tif", lcr, ML_TRANSFORM, "EPSG:26911")
    write_raster("data/Protected_Status_reclassified.tif", prr, ML_TRANSFORM, "EPSG:26911")
    write_raster("data/distance.tif", dist, ML_TRANSFORM, "EPSG:26911")
    write_raster("data/ruggedness.tif", tri, ML_TRANSFORM, "EPSG:26911")
