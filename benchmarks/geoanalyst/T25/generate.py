# Hong Kong-like constituencies (HK 1980 Grid) with demographic, spending,
# health-care and COVID-19 attributes: a dense core around the harbour, older
# districts with more seniors, hospitals that concentrate beds; and the
# worst-case target feature.
r = rng()
land = organic_polygon(835_000, 825_000, 17_000, r, irregularity=0.3)
cells = voronoi_cells(land, 431, rng(1))
while len(cells) < 431:  # tiny slivers can vanish; top up deterministically
    cells = voronoi_cells(land, 431 + (431 - len(cells)), rng(len(cells)))
cells = cells[:431]
cent = np.array([[c.centroid.x, c.centroid.y] for c in cells])
core = np.exp(-np.hypot(cent[:, 0] - 836_000, cent[:, 1] - 818_000) / 5000.0)
old = np.exp(-np.hypot(cent[:, 0] - 832_000, cent[:, 1] - 816_000) / 3500.0)
area_km2 = np.array([c.area for c in cells]) / 1e6
pop = np.round(14_000 + 8_000 * r.uniform(size=431) + 6_000 * core).astype(int)
density = np.round(pop / area_km2, 1)
seniors = np.round(150 + 180 * old + r.normal(0, 25, 431), 1)
spending = np.round(90_000 - 40_000 * old + 30_000 * r.uniform(size=431) - 10_000 * core, 0)
tobacco = np.round(40 + 35 * old + r.normal(0, 8, 431), 1)
hospitals = np.array([[834_500, 817_500], [840_000, 822_000], [828_000, 829_000], [845_000, 830_000]])
near = np.min(np.hypot(cent[:, None, 0] - hospitals[None, :, 0], cent[:, None, 1] - hospitals[None, :, 1]), axis=1)
beds = np.round(2_500 * np.exp(-near / 1500.0) + r.uniform(0, 60, 431), 0)
interaction = np.round(0.2 + 0.8 * core + r.normal(0, 0.05, 431), 3)
cases = np.round(np.clip(0.5 + 2.5 * core + 1.2 * old + r.normal(0, 0.3, 431), 0.05, None), 3)
seeds = np.zeros(431, dtype=int); seeds[np.argsort(core)[[-1, 300, 200, 100, 0]]] = 1
names = [f"{['Kwun Tong', 'Sham Shui Po', 'Sha Tin', 'Tuen Mun', 'Eastern', 'Yuen Long', 'Tai Po', 'Wan Chai'][i % 8]} {i // 8 + 1}" for i in range(431)]
hk = gpd.GeoDataFrame({"ID": np.arange(1, 432), "Constituen": names, "TotalPop": pop, "PopDensity": density, "Seniors60t": seniors,
                       "spending_c": spending, "keyfacts_p": tobacco, "SUM_Beds": beds, "SpInterIdx": interaction,
                       "RelativeCa": cases, "SEEDS": seeds}, geometry=cells, crs=2326)
hk.to_file("data/hkg_constituency.shp")
worst = {"ID": 0, "Constituen": "Target", "TotalPop": int(pop.max()), "PopDensity": density.max(), "Seniors60t": seniors.max(),
         "spending_c": spending.min(), "keyfacts_p": tobacco.max(), "SUM_Beds": beds.min(), "SpInterIdx": interaction.max(),
         "RelativeCa": cases.max()}
gpd.GeoDataFrame([worst], geometry=[Point(836_000, 818_000).buffer(300)], crs=2326).to_file("data/target_risk.shp")
