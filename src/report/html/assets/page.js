// annbench report: draws the charts described in the embedded JSON with Chart.js. A legend
// click shows or hides every dataset of its group (a series' frontier and its other points).
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("annbench-data").textContent);
  var api = (window.annbench = { charts: {}, ready: false });

  function axis(a) {
    return { type: a.log ? "logarithmic" : "linear", title: { display: true, text: a.title } };
  }

  function toggleGroup(event, item, legend) {
    var chart = legend.chart;
    var group = chart.data.datasets[item.datasetIndex].group;
    var show = !chart.isDatasetVisible(item.datasetIndex);
    chart.data.datasets.forEach(function (d, i) {
      if (d.group === group) chart.setDatasetVisibility(i, show);
    });
    chart.update();
  }

  function dataset(d) {
    var fill = d.faded ? d.colour + "66" : d.colour;
    return {
      label: d.label,
      group: d.group,
      inLegend: d.legend,
      showLine: d.line,
      stepped: d.stepped ? "after" : false,
      borderColor: fill,
      backgroundColor: fill,
      borderWidth: d.line ? 2 : 1,
      pointStyle: d.shape === "none" ? "line" : d.shape,
      pointRadius: d.shape === "none" ? 0 : d.faded ? 3 : 4,
      pointHoverRadius: d.shape === "none" ? 0 : 7,
      order: d.faded ? 2 : 1,
      data: d.points.map(function (p) { return { x: p[0], y: p[1], t: p[2], lo: p[3], hi: p[4] }; })
    };
  }

  // A point's bar (its figure's spread): a vertical line with caps from lo to hi.
  var bars = {
    id: "bars",
    afterDatasetsDraw: function (chart) {
      var ctx = chart.ctx, y = chart.scales.y;
      chart.data.datasets.forEach(function (d, i) {
        if (!chart.isDatasetVisible(i)) return;
        chart.getDatasetMeta(i).data.forEach(function (e, j) {
          var p = d.data[j], lo, hi;
          if (p.lo == null) return;
          lo = y.getPixelForValue(p.lo);
          hi = y.getPixelForValue(p.hi);
          ctx.save();
          ctx.strokeStyle = d.borderColor;
          ctx.lineWidth = 1;
          ctx.beginPath();
          ctx.moveTo(e.x, lo); ctx.lineTo(e.x, hi);
          ctx.moveTo(e.x - 3, lo); ctx.lineTo(e.x + 3, lo);
          ctx.moveTo(e.x - 3, hi); ctx.lineTo(e.x + 3, hi);
          ctx.stroke();
          ctx.restore();
        });
      });
    }
  };

  data.charts.forEach(function (spec) {
    var canvas = document.getElementById("chart-" + spec.id);
    api.charts[spec.id] = new Chart(canvas, {
      type: "scatter",
      plugins: [bars],
      data: { datasets: spec.datasets.map(dataset) },
      options: {
        animation: false,
        maintainAspectRatio: false,
        scales: { x: axis(spec.x), y: axis(spec.y) },
        plugins: {
          legend: {
            position: "bottom",
            onClick: toggleGroup,
            labels: {
              usePointStyle: true,
              boxHeight: 7,
              filter: function (item, chartData) { return chartData.datasets[item.datasetIndex].inLegend; }
            }
          },
          tooltip: {
            filter: function (c) { return c.raw.t >= 0; },
            callbacks: {
              title: function (items) { return items.length ? data.tips[items[0].raw.t][0] : ""; },
              label: function (c) { return data.tips[c.raw.t].slice(1); }
            }
          }
        }
      }
    });
  });
  api.ready = true;
})();
