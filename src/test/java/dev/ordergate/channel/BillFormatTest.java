package dev.ordergate.channel;

import dev.ordergate.channel.GatewayBill.BillLine;
import dev.ordergate.channel.GatewayBill.Kind;
import dev.ordergate.channel.alipay.AlipayBill;
import dev.ordergate.channel.wechatpay.WechatPayBill;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.nio.charset.Charset;
import java.util.List;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The bill parsers over the gateways' documented formats (pure: no network, no database). */
class BillFormatTest {

  /** WeChat Pay's ALL header, and a detail line as its documentation shows one (developers.weixin.qq.com). */
  private static final String WECHAT_HEADER = "交易时间,公众账号ID,商户号,特约商户号,设备号,微信订单号,商户订单号,用户标识,交易类型,"
      + "交易状态,付款银行,货币种类,应结订单金额,代金券金额,微信退款单号,商户退款单号,退款金额,充值券退款金额,退款类型,退款状态,"
      + "商品名称,商户数据包,手续费,费率,订单金额,申请退款金额,费率备注";
  private static final String WECHAT_PAID = "`2022-03-21 13:51:31,`wxfdc955f7104ad557,`180023671,`176531292,`,"
      + "`420000612032130748613220688,`2021WERUN1647840687637,`oZWaCKXip5njeEiloC4oeOV1TTsk,`JSAPI,`SUCCESS,`OTHERS,`CNY,"
      + "`0.01,`0.00,`0,`0,`0.00,`0.00,`,`,`微信云托管支付测试,`,`0.00000,`0.90%,`0.01,`0.00,`";
  private static final String WECHAT_REFUND = "`2022-03-21 14:00:00,`wxfdc955f7104ad557,`180023671,`176531292,`,"
      + "`420000612032130748613220688,`2021WERUN1647840687637,`oZWaCKXip5njeEiloC4oeOV1TTsk,`JSAPI,`REFUND,`OTHERS,`CNY,"
      + "`0.00,`0.00,`50300000012022032100001,`R-1,`0.01,`0.00,`ORIGINAL,`SUCCESS,`微信云托管支付测试,`,`0.00000,`0.90%,"
      + "`0.00,`0.01,`";
  private static final String WECHAT_SUMMARY = "总交易单数,应结订单总金额,退款总金额,充值券退款总金额,手续费总金额,订单总金额,申请退款总金额";

  @Test
  void wechatPaysAllBillReadsPaymentsAndRefundsWithoutTheirBackticks() {
    String csv = WECHAT_HEADER + "\r\n" + WECHAT_PAID + "\r\n" + WECHAT_REFUND + "\r\n" + WECHAT_SUMMARY + "\r\n"
        + "`2,`0.01,`0.01,`0.00,`0.00000,`0.01,`0.01\r\n";
    List<BillLine> lines = WechatPayBill.parse("w", csv);
    assertEquals(2, lines.size());
    BillLine paid = lines.get(0);
    assertEquals(new BillLine("420000612032130748613220688", "2021WERUN1647840687637", 1, "CNY", Kind.PAYMENT, null, null,
        "SUCCESS"), paid);
    BillLine refund = lines.get(1);
    assertEquals(Kind.REFUND, refund.kind());
    assertEquals("420000612032130748613220688", refund.txnId());
    assertEquals(1, refund.amountCents());
    assertEquals("50300000012022032100001", refund.refundId());
    assertEquals("R-1", refund.outRefundNo());
  }

  @Test
  void aWechatBillThatDisagreesWithItsSummaryOrHeaderIsRefused() {
    String wrongCount = WECHAT_HEADER + "\n" + WECHAT_PAID + "\n" + WECHAT_SUMMARY + "\n`12,`0.06,`0.06,`0.00,`0.00000,`0.06,`0.06\n";
    assertEquals("MALFORMED_BILL", assertThrows(GatewayFailure.class, () -> WechatPayBill.parse("w", wrongCount)).code());
    String cut = WECHAT_HEADER + "\n" + WECHAT_PAID.substring(0, 120) + "\n";
    assertEquals("MALFORMED_BILL", assertThrows(GatewayFailure.class, () -> WechatPayBill.parse("w", cut)).code());
    String noTxn = WECHAT_HEADER.replace("微信订单号", "订单号") + "\n" + WECHAT_PAID + "\n";
    assertEquals("MALFORMED_BILL", assertThrows(GatewayFailure.class, () -> WechatPayBill.parse("w", noTxn)).code());
    String badAmount = WECHAT_HEADER + "\n" + WECHAT_PAID.replace("`0.90%,`0.01,", "`0.90%,`0.011,") + "\n";
    assertEquals("MALFORMED_BILL", assertThrows(GatewayFailure.class, () -> WechatPayBill.parse("w", badAmount)).code());
  }

  private static final String ALIPAY_HEADER = "支付宝交易号,商户订单号,业务类型,商品名称,创建时间,完成时间,门店编号,门店名称,操作员,终端号,"
      + "对方账户,订单金额（元）,商家实收（元）,支付宝红包（元）,集分宝（元）,支付宝优惠（元）,商家优惠（元）,券核销金额（元）,券名称,"
      + "商家红包消费金额（元）,卡消费金额（元）,退款批次号/请求号,服务费（元）,分润（元）,备注";

  @Test
  void alipaysDetailFileInAGbkZipReadsTradesAndRefunds() throws Exception {
    Charset gbk = Charset.forName("GBK");
    String detail = "#支付宝业务明细查询\r\n#账号：[20880000000000010156]\r\n"
        + "#-----------------------------------------业务明细列表----------------------------------------\r\n"
        + ALIPAY_HEADER + "\r\n"
        + "2016040521001004330200123456\t,TEST001\t,交易\t,测试商品\t,2016-04-05 10:00:00\t,2016-04-05 10:00:05\t,\t,\t,\t,\t,"
        + "a***@sandbox.com\t,12.30\t,12.30\t,0.00\t,0.00\t,0.00\t,0.00\t,0.00\t,\t,0.00\t,0.00\t,\t,-0.07\t,0.00\t,\t\r\n"
        + "2016040521001004330200123456\t,TEST001\t,退款\t,测试商品\t,2016-04-05 11:00:00\t,2016-04-05 11:00:00\t,\t,\t,\t,\t,"
        + "a***@sandbox.com\t,-2.30\t,-2.30\t,0.00\t,0.00\t,0.00\t,0.00\t,0.00\t,\t,0.00\t,0.00\t,REQ-7\t,0.00\t,0.00\t,\t\r\n"
        + "#-----------------------------------------业务明细列表结束------------------------------------\r\n"
        + "#交易合计：1笔，商家实收共12.30元，商家优惠共0.00元\r\n#退款合计：1笔，商家实收退款共-2.30元，商家优惠退款共0.00元\r\n";
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (ZipOutputStream zip = new ZipOutputStream(out, gbk)) {
      zip.putNextEntry(new ZipEntry("20880000000000010156_20160405_业务明细(汇总).csv"));
      zip.write("#支付宝业务汇总查询\r\n".getBytes(gbk));
      zip.putNextEntry(new ZipEntry("20880000000000010156_20160405_业务明细.csv"));
      zip.write(detail.getBytes(gbk));
    }
    List<BillLine> lines = AlipayBill.parse("a", AlipayBill.detailFile("a", out.toByteArray()), "CNY");
    assertEquals(List.of(
        new BillLine("2016040521001004330200123456", "TEST001", 1230, "CNY", Kind.PAYMENT, null, null, "TRADE_SUCCESS"),
        new BillLine("2016040521001004330200123456", "TEST001", 230, "CNY", Kind.REFUND, "REQ-7", "REQ-7", "REFUND")), lines);
    String miscounted = detail.replace("#交易合计：1笔", "#交易合计：2笔");
    assertEquals("MALFORMED_BILL", assertThrows(GatewayFailure.class, () -> AlipayBill.parse("a", miscounted, "CNY")).code());
    assertEquals("MALFORMED_BILL", assertThrows(GatewayFailure.class, () -> AlipayBill.detailFile("a", new byte[] {1, 2, 3})).code());
  }

  @Test
  void anEmptyWechatBodyIsAnEmptyBill() {
    assertEquals(List.of(), WechatPayBill.parse("w", ""));
  }
}
