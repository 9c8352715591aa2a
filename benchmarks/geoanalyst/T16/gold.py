import matplotlib.pyplot as plt
import xarray as xr
ds = xr.open_dataset("data/A1B_north_america.nc")
w = np.cos(np.deg2rad(ds.latitude))
series = ds.air_temperature.weighted(w).mean(dim=["latitude", "longitude"])
years = series.time.dt.year.values
coef = np.polyfit(years, series.values, 2)
fitted = np.polyval(coef, years)
pd.DataFrame({"year": years, "observed": series.values, "fitted": fitted}).to_csv("pred_results/polynomial_fit_pred.csv", index=False)
print(coef)
fig, ax = plt.subplots(figsize=(9, 5))
ax.plot(years, series.values, color="grey", label="observed"); ax.plot(years, fitted, color="red", label="quadratic fit")
ax.set_xlabel("year"); ax.set_ylabel("temperature (K)"); ax.legend(); ax.set_title("North America: quadratic temperature trend")
fig.savefig("pred_results/polynomial_fit.png", dpi=110, bbox_inches="tight")
