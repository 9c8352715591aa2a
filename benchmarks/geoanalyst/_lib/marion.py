# Marion County-like study area for the groundwater tasks (T04, T26, T27):
# county boundary and 100 m NLCD land cover in NAD83 / Oregon North
# (EPSG:32126), soil map units with drainage class and water-table depth —
# a river valley with shallow water and poorly drained soils, a town, farmland
# and forested hills.
MC_CRS = "EPSG:32126"
MC_CENTRE = (2_330_000.0, 130_000.0)
MC_SHAPE = (540, 540)
MC_TRANSFORM = from_origin(MC_CENTRE[0] - 27_000, MC_CENTRE[1] + 27_000, 100, 100)
DRAINAGE_CLASSES = ["Excessively drained", "Moderately well drained", "Poorly drained",
                    "Somewhat poorly drained", "Well drained"]


def mc_layers():
    """County polygon, land-cover array and soils (in MC_CRS)."""
    r = rng()
    cx, cy = MC_CENTRE
    county = organic_polygon(cx, cy, 24_000.0, r, irregularity=0.2)
    river = wiggly_line((cx - 32_000, cy - 6_000), (cx + 32_000, cy + 9_000), r, 16, 0.06)
    xs = MC_TRANSFORM.c + 50 + 100 * np.arange(MC_SHAPE[1]); ys = MC_TRANSFORM.f - 50 - 100 * np.arange(MC_SHAPE[0])
    gx, gy = np.meshgrid(xs, ys)
    dist = shapely.distance(river, shapely.points(gx, gy))
    hills = smooth_field(MC_SHAPE, rng(1), 25)
    wet = np.exp(-dist / 5000.0)
    lc = np.select([dist < 250, wet > 0.75, hills > 0.7, hills > 0.55, hills > 0.45, wet > 0.4, hills > 0.3],
                   [11, 90, 42, 43, 41, 82, 81], 71).astype("uint8")
    lc[(lc == 82) & (smooth_field(MC_SHAPE, rng(8), 10) > 0.5)] = 81
    lc[(smooth_field(MC_SHAPE, rng(2), 6) > 0.8) & (hills < 0.5)] = 52
    lc[(wet > 0.85) & (smooth_field(MC_SHAPE, rng(3), 4) > 0.75)] = 95
    town = np.hypot(gx - (cx + 6_000), gy - (cy + 2_000))
    lc[town < 4_000] = 22; lc[town < 2_500] = 23; lc[town < 1_200] = 24; lc[(town > 4_000) & (town < 5_000)] = 21
    lc[smooth_field(MC_SHAPE, rng(4), 3) > 0.92] = 31
    cells = voronoi_cells(county.buffer(3_000), 420, rng(5))
    cent = np.array([[c.centroid.x, c.centroid.y] for c in cells])
    d = shapely.distance(river, shapely.points(cent))
    depth = np.clip(5 + 85 * (1 - np.exp(-d / 6000.0)) + rng(6).normal(0, 8, len(cells)), 0, 92).round(0)
    cls = np.select([depth < 15, depth < 35, depth < 60, depth < 85], [2, 3, 1, 4], 0)
    hyd = np.select([depth < 15, depth < 35, depth < 60], ["D", "C/D", "C"], "B")
    depth_col = pd.array(depth, dtype="Float64"); depth_col[rng(7).choice(len(cells), 12, replace=False)] = pd.NA
    soils = gpd.GeoDataFrame({
        "AREASYMBOL": "OR643", "SPATIALVER": 7, "MUSYM": [f"{10 + k % 80}{'ABCDE'[k % 5]}" for k in range(len(cells))],
        "MUKEY": [str(2_400_000 + 37 * k) for k in range(len(cells))], "drclassdcd": [DRAINAGE_CLASSES[k] for k in cls],
        "hydgrpdcd": hyd, "wdepannmin": depth_col}, geometry=cells, crs=MC_CRS)
    return county, lc, soils


def write_mc_boundary(county):
    gpd.GeoDataFrame({"OBJECTID_1": [1], "AREA": [county.area], "PERIMETER": [county.length], "BLMCNTYO_": [24],
                      "BLMCNTYO_I": [24], "COUNTY_NAM": ["Marion"], "COBCODE": ["OR047"]},
                     geometry=[county], crs=MC_CRS).to_file("data/mc_boundary.shp")


def mc_vulnerability(county, soils):
    """5 × drainage score + 4 × depth score on the land-cover grid, NaN outside the county."""
    from rasterio.features import rasterize
    code = {c: i + 1 for i, c in enumerate(DRAINAGE_CLASSES)}
    drain = rasterize(zip(soils.geometry, soils["drclassdcd"].map(code)), out_shape=MC_SHAPE, transform=MC_TRANSFORM, fill=0)
    drain_score = np.select([drain == 1, drain == 2, drain == 3, drain == 4, drain == 5], [3, 1, 4, 5, 2], np.nan)
    known = soils[soils["wdepannmin"].notna()]
    depth = rasterize(zip(known.geometry, known["wdepannmin"].astype(float)), out_shape=MC_SHAPE, transform=MC_TRANSFORM, fill=-1, dtype="float32")
    depth_score = np.select([depth < 0, depth < 10, depth < 33, depth < 61, depth < 80, depth <= 92], [np.nan, 5, 4, 3, 2, 1], np.nan)
    inside = rasterize([county], out_shape=MC_SHAPE, transform=MC_TRANSFORM) == 1
    return np.where(inside, 5 * drain_score + 4 * depth_score, np.nan)
