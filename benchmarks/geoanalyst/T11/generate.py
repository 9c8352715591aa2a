# Catalina-like bathymetry (UTM 11N, 40 m) — an island with a narrow shelf,
# steep walls and deep basins — and coral and sponge observations whose groups
# prefer different depths and slopes.
r = rng()
shape = (664, 853)
transform = from_origin(340_000, 3_710_000, 40, 40)
rows, cols = np.indices(shape)
u = (cols - 426) / 300.0; v = (rows - 332) / 110.0
c, s = np.cos(0.45), np.sin(0.45)
d = np.hypot(u * c - v * s * 0.35, (u * s + v * c) * 0.9)
rough = smooth_field(shape, r, 8)
elev = 600 * (1 - d) - 1400 * np.clip(d - 1, 0, None) ** 0.6 + 60 * (rough - 0.5)
elev = np.where(d < 1, np.clip(elev, 0, None) * 0.8 + 5, elev)
elev -= 300 * blob(shape, (80, 700), 90) + 250 * blob(shape, (600, 150), 110)
elev = elev.astype("float32")
write_raster("data/CatalinaBathymetry.tif", elev, transform, "EPSG:26911", nodata=-9999.0)
gy, gx = np.gradient(elev, 40.0)
slope = np.degrees(np.arctan(np.hypot(gx, gy)))
groups = {  # name: (preferred depth, slope weight)
    "gorgonian coral": (-350, 2.0), "black coral": (-600, 1.5), "stony coral (cup coral)": (-150, 1.0),
    "lace coral": (-120, 0.8), "soft coral": (-400, 0.5), "sea pen": (-700, -1.5),
    "demosponge": (-250, 0.3), "glass sponge": (-900, 0.0)}
cand_r = r.integers(0, shape[0], 40_000); cand_c = r.integers(0, shape[1], 40_000)
ce = elev[cand_r, cand_c]; cs = slope[cand_r, cand_c]
keep = (ce < -30) & (ce > -1500)
cand_r, cand_c, ce, cs = cand_r[keep], cand_c[keep], ce[keep], cs[keep]
recs = []
for name, (depth, w) in groups.items():
    weight = np.exp(-((ce - depth) / 200.0) ** 2) * np.exp(w * (cs - cs.mean()) / cs.std())
    pick = r.choice(len(ce), 75, replace=False, p=weight / weight.sum())
    for k in pick:
        recs.append((name, cand_r[k], cand_c[k], float(-ce[k])))
xs = [transform.c + 40 * (c_ + r.uniform()) for _, _, c_, _ in recs]
ys = [transform.f - 40 * (r_ + r.uniform()) for _, r_, _, _ in recs]
pts = gpd.GeoSeries(gpd.points_from_xy(xs, ys), crs=26911).to_crs(4326)
n = len(recs)
sci = {"gorgonian coral": "Muricea californica", "black coral": "Antipathes dendrochristos", "stony coral (cup coral)": "Balanophyllia elegans",
       "lace coral": "Stylaster californicus", "soft coral": "Gersemia rubiformis", "sea pen": "Ptilosarcus gurneyi",
       "demosponge": "Tethya californiana", "glass sponge": "Farrea occa"}
df = gpd.GeoDataFrame({
    "OBJECTID": np.arange(1, n + 1), "ShallowFlag": [int(d_ < 50) for *_, d_ in recs], "DatasetID": "NOAA_SWFSC_Catalina",
    "CatalogNumber": np.arange(500_001, 500_001 + n), "SampleID": [f"CAT-{i:04d}" for i in range(n)],
    "Repository": "NOAA SWFSC", "ScientificName": [sci[g] for g, *_ in recs], "VernacularNameCategory": [g for g, *_ in recs],
    "TaxonRank": "species", "IdentificationQualifier": "", "Locality": "Santa Catalina Island",
    "latitude": pts.y.round(6), "longitude": pts.x.round(6), "DepthInMeters": [round(d_, 1) for *_, d_ in recs],
    "DepthMethod": "reported", "ObservationDate": [f"20{10 + i % 9}-0{1 + i % 9}-15" for i in range(n)],
    "SurveyID": [f"SV{i % 12:02d}" for i in range(n)], "Station": [f"ST{i % 40:03d}" for i in range(n)],
    "EventID": [f"EV{i % 90:03d}" for i in range(n)], "SamplingEquipment": "ROV", "LocationAccuracy": "50m",
    "RecordType": "video observation", "DataProvider": "NOAA Southwest Fisheries Science Center"},
    geometry=pts.values, crs=4326).sample(frac=1.0, random_state=SEED).reset_index(drop=True)
df.to_file("data/CoralandSpongeCatalina.geojson", driver="GeoJSON")
