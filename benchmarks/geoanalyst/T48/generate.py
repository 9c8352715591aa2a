# Census-tract-like polygons of a California-like region (EPSG:3310) with
# LendingClub-style loan aggregates: rates follow the average loan grade plus
# a smooth regional premium; loan counts are high in the metros.
r = rng()
region = shapely.affinity.rotate(shapely.affinity.scale(organic_polygon(0, 0, 300_000, r, 0.15), 0.55, 1.6), -25)
metros = [(-120_000, -180_000), (-180_000, 150_000), (60_000, -330_000)]
pts = points_in(region, 6000, r)
xy = np.array([[p.x, p.y] for p in pts])
dens = 0.05 + sum(np.exp(-np.hypot(xy[:, 0] - mx, xy[:, 1] - my) / 60_000) for mx, my in metros)
pick = r.choice(len(pts), 600, replace=False, p=dens / dens.sum())
cells = shapely.voronoi_polygons(shapely.MultiPoint([pts[k] for k in pick]), extend_to=region.buffer(50_000))
tracts = [c.intersection(region) for c in cells.geoms]
tracts = [t for t in tracts if not t.is_empty and t.area > 0]
c = np.array([[t.centroid.x, t.centroid.y] for t in tracts])
urban = sum(np.exp(-np.hypot(c[:, 0] - mx, c[:, 1] - my) / 80_000) for mx, my in metros)
loans = np.round(r.gamma(2.0, 12 + 35 * np.clip(urban, 0, 1.5))).astype(int) + 1
grade = np.clip(3.2 - 0.8 * np.clip(urban, 0, 1) + r.normal(0, 0.45, len(tracts)), 1, 7)
coast = (c[:, 0] - c[:, 0].min()) / (c[:, 0].max() - c[:, 0].min())
premium = 1.6 * coast - 1.0 * np.clip(urban, 0, 1) + 0.3 * np.sin(c[:, 1] / 120_000)
rate = np.round(6.0 + 2.4 * grade + premium + r.normal(0, 0.5, len(tracts)) / np.sqrt(loans / 10), 2)
gpd.GeoDataFrame({"GEOID": [f"06{k // 100:03d}{k:06d}" for k in range(len(tracts))], "AcceptedLo": loans,
                  "AveInteres": rate, "AveLoanGra": np.round(grade, 2), "AveLoanAmt": np.round(r.normal(14_000, 2_500, len(tracts)), 0)},
                 geometry=tracts, crs=3310).to_file("data/loan_data.shp")
