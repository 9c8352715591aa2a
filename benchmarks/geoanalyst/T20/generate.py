# Tasmania-like island (GDA94 / MGA zone 55, 500 m cells) with seven
# geophysical evidence rasters and tin-tungsten occurrences clustered where
# granite shows: low residual gravity, high thorium and uranium, a magnetic
# low and its edge (1VD). Outside the island the rasters hold nodata.
r = rng()
rows, cols = 140, 120
cell = 500.0
x0, y1 = 380000.0, 5500000.0
transform = from_origin(x0, y1, cell, cell)
island = organic_polygon(x0 + cols * cell / 2, y1 - rows * cell / 2, 0.42 * cols * cell, r, irregularity=0.12)
inside = rasterio.features.rasterize([(island, 1)], out_shape=(rows, cols), transform=transform, fill=0).astype(bool)
granite = np.zeros((rows, cols))
centres = [(30, 40), (45, 85), (90, 30), (105, 80), (70, 60)]
for c in centres:
    granite += blob((rows, cols), c, r.uniform(5, 9))
granite = np.clip(granite, 0, 1)
bg = lambda s: smooth_field((rows, cols), r, sigma=s)
layers = {
    "tasgrav_IR": 20 - 35 * granite + 15 * bg(10),
    "tasmag_TMI": 150 - 220 * granite + 180 * bg(6),
    "tasrad_K_pct": 1.2 + 1.5 * granite + 0.8 * bg(5),
    "tasrad_Th_ppm": 8 + 18 * granite + 6 * bg(5),
    "tasrad_U_ppm": 1.5 + 4 * granite + 1.5 * bg(5),
}
layers["tasgrav_IR_1VD"] = np.hypot(*np.gradient(layers["tasgrav_IR"]))
layers["tasmag_TMI_1VD"] = np.hypot(*np.gradient(layers["tasmag_TMI"]))
for name, arr in layers.items():
    out = np.where(inside, arr, -99999.0).astype("float32")
    write_raster(f"data/{name}.tif", out, transform, "EPSG:28355", nodata=-99999.0)
# Occurrences: sampled with probability rising steeply with granite.
prob = np.where(inside, granite ** 3, 0).ravel()
picks = r.choice(rows * cols, 60, replace=False, p=prob / prob.sum())
rr, cc = np.unravel_index(picks, (rows, cols))
xs = x0 + (cc + r.uniform(0.1, 0.9, 60)) * cell
ys = y1 - (rr + r.uniform(0.1, 0.9, 60)) * cell
n = len(xs)
text = lambda *choices: r.choice(list(choices), n)
occ = gpd.GeoDataFrame({
    "GID": np.arange(1, n + 1), "DEPOSIT_ID": 4000 + np.arange(n), "NAME": [f"Prospect {i + 1}" for i in range(n)],
    "ALIAS": "", "PARENT_ID": 0, "TYPE": text("Mine", "Prospect", "Occurrence"), "COMM_TYPE": "Metallic",
    "COMMODITYS": text("Sn", "W", "Sn, W", "Sn, Cu"), "DESCRIPT": text("Greisen", "Skarn", "Vein"), "LOCALITY": text("North-east", "West coast", "Central"),
    "LOC_ACC": text("100 m", "250 m"), "LOC_METHOD": "GPS", "RL": r.integers(50, 900, n), "RL_ACC": "10 m",
    "STATUS": text("Abandoned", "Historic", "Undeveloped"), "STATUSDATE": "1990-01-01", "DEP_SIZE": text("Small", "Medium", "Large"),
    "RESOURCES": "", "FORM": text("Vein", "Lens", "Disseminated"), "STRIKE": r.integers(0, 180, n), "DIP": r.integers(20, 90, n),
    "LITHOSTRAT": "Devonian granite", "HOST_AGE": "Devonian", "LITHOLOGY": text("Granite", "Hornfels"), "ORE_DESCRT": "Cassiterite, wolframite",
    "ORE_GENESS": "Magmatic-hydrothermal", "MINERALAGE": "Devonian", "GANGUE": "Quartz", "EXPL_TYPE": text("Drilling", "Mapping"),
    "OUTCROPS": text("Y", "N"), "WEATHERED": text("Y", "N"), "XTRCTBLTY": "", "USES": "", "TESTS": "", "GENETIC": "Granite-related",
    "DATA_MTLGA": "", "REF": "synthetic",
}, geometry=gpd.points_from_xy(xs, ys), crs=28355)
occ.to_file("data/sn_w_minoccs.gpkg", layer="sn_w_minoccs", driver="GPKG")
