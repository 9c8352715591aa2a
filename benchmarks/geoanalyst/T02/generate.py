r = rng()
cx, cy = 655_000.0, 3_880_000.0
county = organic_polygon(cx, cy, 20_000, r, 0.15)
bg = gpd.GeoDataFrame(geometry=voronoi_cells(county, 120, r), crs=32616)
c = bg.geometry.centroid
urban = np.exp(-((c.x - cx) ** 2 + (c.y - cy) ** 2) / (2 * 6000**2))
rural_poor = np.exp(-((c.x - cx - 12000) ** 2 + (c.y - cy + 10000) ** 2) / (2 * 5000**2))
bg["OBJECTID"] = np.arange(1, len(bg) + 1)
bg["GEOID"] = [f"47065{i:06d}" for i in range(len(bg))]
bg["NAME"] = [f"Block Group {i % 4 + 1}" for i in range(len(bg))]
bg["COUNTY"] = "065"; bg["STATE"] = "47"
pop = (400 + 2600 * urban + r.integers(0, 500, len(bg))).round()
bg["POP100"] = pop.astype(int)
bg["populationtotals_TOTPOP_CY"] = (pop * 1.04).round().astype(int)
dens = pop / (bg.geometry.area / 1e6)
bg["populationToPolygonSizeRating"] = pd.qcut(dens, 5, labels=False).astype(float) + 1
bg["households_ACSHHBPOV"] = np.clip(8 + 25 * urban + 20 * rural_poor + r.normal(0, 3, len(bg)), 0, 80).round(1)
bg["AtRisk_ACSOVEH0"] = np.clip(3 + 18 * urban + 10 * rural_poor + r.normal(0, 2, len(bg)), 0, 60).round(1)
bg.loc[r.choice(len(bg), 4, replace=False), "households_ACSHHBPOV"] = np.nan
bg["Shape_Length"] = bg.geometry.length.round(2); bg["Shape_Area"] = bg.geometry.area.round(2)
bg.to_crs(4326).to_file("data/HamiltonDemographics.geojson", driver="GeoJSON")
stops = []
for k, (dx, dy) in enumerate([(1, 0.2), (-0.3, 1), (0.7, -0.8)]):
    line = wiggly_line((cx - 9000 * dx, cy - 9000 * dy), (cx + 9000 * dx, cy + 9000 * dy), r)
    stops += [line.interpolate(f, normalized=True) for f in np.linspace(0.05, 0.95, 12)]
sa = gpd.GeoDataFrame({"OBJECTID": np.arange(1, len(stops) + 1), "FacilityID": np.arange(101, 101 + len(stops)),
                       "Name": [f"Stop {i + 1} : 0 - 400" for i in range(len(stops))], "FromBreak": 0.0, "ToBreak": 400.0},
                      geometry=[s.buffer(400 + r.uniform(-60, 60)) for s in stops], crs=32616)
sa["Shape_Length"] = sa.geometry.length.round(2); sa["Shape_Area"] = sa.geometry.area.round(2)
sa.to_crs(3857).to_file("data/BusServiceArea.geojson", driver="GeoJSON")
